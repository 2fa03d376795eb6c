import { expect } from 'chai';
import { pngImage } from '../helpers/media-fixtures.js';
import { expectOnce, freshNumber, sentTo, startHelpdeskRig } from './helpdesk-support.js';
import type { HelpdeskRig } from './helpdesk-support.js';
import { expectOk } from './support.js';
import { until } from '../helpers/until.js';

const jidOf = (number: string) => `${number}@s.whatsapp.net`;

describe('helpdesk bridge: WhatsApp ↔ Chatwoot through a sandbox node', () => {
  let rig: HelpdeskRig;
  let seq = 0;
  const fresh = (p: string) => `${p}-${++seq}`;

  before(async () => {
    rig = await startHelpdeskRig();
  });

  after(async () => {
    await rig.stop();
  });

  describe('WhatsApp → Chatwoot', () => {
    it('a contact is created per number, with one open conversation and its messages, incoming, in order', async () => {
      const name = fresh('in');
      const token = await rig.instance(name);
      const from = freshNumber();
      const first = await rig.inbound(name, token, from, 'Hello *there*', { pushName: 'Maria' });
      const contact = await rig.contact(jidOf(from));
      expect(contact).to.include({ name: 'Maria', phone_number: `+${from}`, identifier: jidOf(from) });
      const [conversation] = await rig.conversations(contact);
      expect(conversation!.status).to.equal('open');
      expect(conversation!.inbox_id).to.equal(rig.fake.inboxes.find((i) => i.name === `inbox ${name}`)!.id);
      const second = await rig.inbound(name, token, from, 'second', { pushName: 'Maria' });
      const messages = await rig.messages(conversation!.id, 2);
      expect(messages.map((m) => [m.content, m.message_type, m.source_id])).to.deep.equal([
        ['Hello **there**', 'incoming', `WAID:${first}`],
        ['second', 'incoming', `WAID:${second}`],
      ]);
      expect(rig.fake.contacts.filter((c) => c.phone_number === `+${from}`)).to.have.length(1);
      expect(rig.fake.conversationsOf(contact.id)).to.have.length(1);
    });

    it("the instance's own sends made elsewhere are posted as outgoing", async () => {
      const name = fresh('out');
      const token = await rig.instance(name);
      const to = freshNumber();
      await rig.inbound(name, token, to, 'hi');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(to)));
      const sent = await rig.net.node.api.post(
        `/api/message/text/${name}`,
        { number: to, text: 'sent from the API' },
        { token },
      );
      expectOk(sent);
      const messages = await rig.messages(conversation!.id, 2);
      expect(messages[1]).to.include({
        content: 'sent from the API',
        message_type: 'outgoing',
        source_id: `WAID:${sent.body.data.messageId}`,
      });
      // Its message_created echo is ours (WAID:…): not sent again. An agent reply, queued after it, shows it was handled.
      await rig.fake.agentReply(conversation!.id, { content: 'agent reply' });
      await until(
        async () => (await sentTo(rig, name, token, jidOf(to))).some((e) => e.text === 'agent reply'),
        'the agent reply',
        8000,
      );
      expect((await sentTo(rig, name, token, jidOf(to))).map((e) => e.text)).to.deep.equal([
        'sent from the API',
        'agent reply',
      ]);
    });

    it('media goes as a multipart attachment with its bytes', async () => {
      const name = fresh('media');
      const token = await rig.instance(name);
      const from = freshNumber();
      const png = await pngImage(4, 4);
      await rig.inbound(name, token, from, '', {
        media: { kind: 'image', mimetype: 'image/png', caption: 'a pixel', base64: png.toString('base64') },
      });
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      const [message] = await rig.messages(conversation!.id, 1);
      expect(message!.content).to.equal('a pixel');
      expect(message!.attachments).to.have.length(1);
      expect(message!.attachments[0]!.file_type).to.equal('image');
      expect(message!.attachments[0]!.contentType).to.equal('image/png');
      expect(message!.attachments[0]!.data.equals(png)).to.equal(true);
    });

    it('a group becomes a contact named after the group, its members named in the text; ignoreGroups keeps groups out', async () => {
      const name = fresh('group');
      const token = await rig.instance(name);
      const member = freshNumber();
      const created = await rig.net.node.api.post(
        `/api/sandbox/group/${name}`,
        { subject: 'Project Falcon', participants: [{ number: member }] },
        { token },
      );
      expectOk(created, 201);
      const groupJid = created.body.group.jid as string;
      await rig.inbound(name, token, member, 'status update', { pushName: 'Rui', groupJid });
      const contact = await rig.contact(groupJid);
      expect(contact).to.include({ name: 'Project Falcon', phone_number: null });
      const [conversation] = await rig.conversations(contact);
      const [message] = await rig.messages(conversation!.id, 1);
      expect(message!.content).to.equal('**Rui:**\nstatus update');

      expectOk(await rig.set(name, token, { ignoreGroups: true }));
      await rig.inbound(name, token, member, 'not forwarded', { pushName: 'Rui', groupJid });
      const marker = freshNumber();
      await rig.inbound(name, token, marker, 'after the group message');
      await rig.messages((await rig.conversations(await rig.contact(jidOf(marker))))[0]!.id, 1);
      expect(rig.fake.messagesOf(conversation!.id)).to.have.length(1);
    });

    it('startAsPending opens new conversations as pending', async () => {
      const name = fresh('pending');
      const token = await rig.instance(name, { startAsPending: true });
      const from = freshNumber();
      await rig.inbound(name, token, from, 'hello');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      expect(conversation!.status).to.equal('pending');
    });

    it('without reopenResolved, a message after the agent resolved the conversation opens a new one', async () => {
      const name = fresh('noreopen');
      const token = await rig.instance(name);
      const from = freshNumber();
      await rig.inbound(name, token, from, 'first');
      const contact = await rig.contact(jidOf(from));
      const [old] = await rig.conversations(contact);
      await rig.messages(old!.id, 1);
      await rig.fake.resolve(old!.id);
      await rig.inbound(name, token, from, 'again');
      const conversations = await rig.conversations(contact, 2);
      const fresh_ = conversations.find((c) => c.id !== old!.id)!;
      expect(old!.status).to.equal('resolved');
      expect(fresh_.status).to.equal('open');
      expect((await rig.messages(fresh_.id, 1)).map((m) => m.content)).to.deep.equal(['again']);
      expect(rig.fake.messagesOf(old!.id).map((m) => m.content)).to.deep.equal(['first']);
    });

    it('with reopenResolved (and startAsPending), the resolved conversation is reopened, as pending', async () => {
      const name = fresh('reopen');
      const token = await rig.instance(name, { reopenResolved: true, startAsPending: true });
      const from = freshNumber();
      await rig.inbound(name, token, from, 'first');
      const contact = await rig.contact(jidOf(from));
      const [conversation] = await rig.conversations(contact);
      await rig.messages(conversation!.id, 1);
      await rig.fake.resolve(conversation!.id);
      await rig.inbound(name, token, from, 'back again');
      await rig.messages(conversation!.id, 2);
      expect(rig.fake.conversationsOf(contact.id)).to.have.length(1);
      expect(conversation!.status).to.equal('pending');
      expect(rig.fake.requests).to.include(`POST /conversations/${conversation!.id}/toggle_status`);
    });
  });

  describe('Chatwoot → WhatsApp', () => {
    /** An instance, a contact who wrote once, and that contact's conversation. */
    async function conversationWith(settings: Record<string, unknown> = {}) {
      const name = fresh('agent');
      const token = await rig.instance(name, settings);
      const from = freshNumber();
      await rig.inbound(name, token, from, 'I need help');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      await rig.messages(conversation!.id, 1);
      return { name, token, jid: jidOf(from), conversation: conversation! };
    }

    it("an agent's reply reaches the contact once, in WhatsApp's marks, and is not posted back", async () => {
      const { name, token, jid, conversation } = await conversationWith();
      const { message, webhookStatus } = await rig.fake.agentReply(conversation.id, {
        content: 'We are on it, **promise**',
      });
      expect(webhookStatus).to.equal(200);
      const sent = await until(
        async () => {
          const out = await sentTo(rig, name, token, jid);
          return out.length > 0 ? out : undefined;
        },
        'the reply in the outbox',
        8000,
      );
      expect(sent.map((e) => [e.type, e.text])).to.deep.equal([['text', 'We are on it, *promise*']]);
      // A redelivered webhook (same Chatwoot message) is not sent again.
      const delivery = rig.fake.webhooks.find((w) => w.body.id === message.id && w.body.event === 'message_created')!;
      expect(await rig.fake.redeliver(delivery)).to.equal(200);
      // Something later in the same queue shows the redelivery was handled.
      await rig.fake.agentReply(conversation.id, { content: 'second reply' });
      await until(async () => (await sentTo(rig, name, token, jid)).length === 2, 'the second reply', 8000);
      const all = await sentTo(rig, name, token, jid);
      expect(all.map((e) => e.text)).to.deep.equal(['We are on it, *promise*', 'second reply']);
      // The echoes of our sends (fromMe) did not come back to Chatwoot as new messages.
      await rig.fake.settled();
      expect(rig.fake.messagesOf(conversation.id).map((m) => m.content)).to.deep.equal([
        'I need help',
        'We are on it, **promise**',
        'second reply',
      ]);
    });

    it('signs with the agent name when signMessages', async () => {
      const { name, token, jid, conversation } = await conversationWith({ signMessages: true });
      await rig.fake.agentReply(conversation.id, { content: 'Your order shipped', agent: 'Joana Lima' });
      const [sent] = await until(
        async () => {
          const out = await sentTo(rig, name, token, jid);
          return out.length > 0 ? out : undefined;
        },
        'the signed reply',
        8000,
      );
      expect(sent.text).to.equal('*Joana Lima:*\nYour order shipped');
    });

    it('private notes and our own posts are not sent', async () => {
      const { name, token, jid, conversation } = await conversationWith();
      await rig.fake.agentReply(conversation.id, { content: 'internal note', private: true });
      await rig.fake.agentReply(conversation.id, { content: 'public answer' });
      const out = await until(
        async () => {
          const list = await sentTo(rig, name, token, jid);
          return list.length > 0 ? list : undefined;
        },
        'the public answer',
        8000,
      );
      expect(out.map((e) => e.text)).to.deep.equal(['public answer']);
      // The incoming message we posted came back as message_created and was ignored.
      expect(
        rig.fake.webhooks.some((w) => w.body.message_type === 'incoming' && w.body.source_id?.startsWith('WAID:')),
      ).to.equal(true);
    });

    it('sends an attachment from its data_url with the text as caption', async () => {
      const { name, token, jid, conversation } = await conversationWith();
      const png = await pngImage(8, 8);
      await rig.fake.agentReply(conversation.id, {
        content: 'the invoice',
        attachments: [{ contentType: 'image/png', data: png, fileName: 'invoice.png' }],
      });
      const [sent] = await until(
        async () => {
          const out = await sentTo(rig, name, token, jid);
          return out.length > 0 ? out : undefined;
        },
        'the attachment',
        8000,
      );
      expect(sent.type).to.equal('media');
      expect(sent.media).to.include({ kind: 'image', mimetype: 'image/jpeg', caption: 'the invoice' });
    });

    it('a send that fails becomes a private note in the conversation', async () => {
      const { name, token, jid, conversation } = await conversationWith();
      await rig.net.fault(name, token, 'sendText', 'recipient unreachable');
      await rig.fake.agentReply(conversation.id, { content: 'will not arrive' });
      const note = await until(
        () => rig.fake.messagesOf(conversation.id).find((m) => m.private),
        'the private note',
        8000,
      );
      expect(note).to.include({
        content: 'Message not delivered to WhatsApp: recipient unreachable',
        message_type: 'outgoing',
      });
      expect(await sentTo(rig, name, token, jid)).to.deep.equal([]);
    });
  });

  describe('status', () => {
    it('an outage turns the status to error; recovery turns it back to active and delivers what waited, once and in order', async () => {
      const name = fresh('outage');
      const token = await rig.instance(name);
      const from = freshNumber();
      await rig.inbound(name, token, from, 'before');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      await rig.messages(conversation!.id, 1);

      rig.fake.fail({ status: 500 });
      await rig.inbound(name, token, from, 'during 1');
      await rig.inbound(name, token, from, 'during 2');
      const broken = await until(
        async () => {
          const h = await rig.list(name, token);
          return h.status === 'error' ? h : undefined;
        },
        'status error',
        8000,
      );
      expect(broken.last_error).to.match(/^Chatwoot .*HTTP 500/);

      rig.fake.recover();
      await until(async () => (await rig.list(name, token)).status === 'active', 'status active', 8000);
      const messages = await rig.messages(conversation!.id, 3);
      await rig.inbound(name, token, from, 'after');
      await rig.messages(conversation!.id, 4);
      expect(rig.fake.messagesOf(conversation!.id).map((m) => m.content)).to.deep.equal([
        'before',
        'during 1',
        'during 2',
        'after',
      ]);
      expect(messages).to.have.length(3);
    });

    it('a post that Chatwoot made but answered too late is not repeated', async () => {
      const name = fresh('slow');
      const token = await rig.instance(name);
      const from = freshNumber();
      await rig.inbound(name, token, from, 'warm up');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      await rig.messages(conversation!.id, 1);

      rig.fake.fail({ delayMs: 1_000 });
      const id = await rig.inbound(name, token, from, 'slow answer');
      await until(() => rig.fake.messagesOf(conversation!.id).length === 2, 'the post to reach Chatwoot', 8000);
      const seen = rig.fake.requests.length;
      await until(() => rig.fake.requests.length > seen, 'another attempt', 8000);
      rig.fake.recover();
      await rig.inbound(name, token, from, 'next');
      await until(
        () => rig.fake.messagesOf(conversation!.id).some((m) => m.content === 'next'),
        'the next message',
        8000,
      );
      expectOnce(rig.fake.messagesOf(conversation!.id), (m) => m.source_id === `WAID:${id}`, 'the slow message');
      expect(rig.fake.messagesOf(conversation!.id).map((m) => m.content)).to.deep.equal([
        'warm up',
        'slow answer',
        'next',
      ]);
    });

    it('paused forwards nothing either way; resuming goes back to active', async () => {
      const name = fresh('paused');
      const token = await rig.instance(name);
      const from = freshNumber();
      await rig.inbound(name, token, from, 'before the pause');
      const [conversation] = await rig.conversations(await rig.contact(jidOf(from)));
      await rig.messages(conversation!.id, 1);

      const paused = await rig.set(name, token, { paused: true });
      expectOk(paused);
      expect(paused.body.helpdesk.status).to.equal('paused');
      expect(paused.body.message).to.equal('Helpdesk integration saved and paused');
      await rig.inbound(name, token, from, 'while paused');
      const { webhookStatus } = await rig.fake.agentReply(conversation!.id, { content: 'agent while paused' });
      expect(webhookStatus).to.equal(200);

      const resumed = await rig.set(name, token, { paused: false });
      expect(resumed.body.helpdesk.status).to.equal('active');
      await rig.inbound(name, token, from, 'resumed');
      await rig.messages(conversation!.id, 3);
      expect(rig.fake.messagesOf(conversation!.id).map((m) => m.content)).to.deep.equal([
        'before the pause',
        'agent while paused',
        'resumed',
      ]);
      expect(await sentTo(rig, name, token, jidOf(from))).to.deep.equal([]);
    });
  });
});
