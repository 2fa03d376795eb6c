import { expect } from 'chai';
import WebSocket from 'ws';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/** RFC 3339 with a zone, as the hosted product's clients parse timestamps. */
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * A client written the way the hosted product's clients are: Bearer token, flat creation body, the alias
 * paths, and strict parsing of the event layouts. It throws on anything it does not expect.
 */
class HostedProductClient {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(this.base + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as { success: boolean };
    if (!json.success) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  /** The hosted layout: everything a client reads is in `data.message` (api/events/catalog). */
  static parseMessageExchange(envelope: any) {
    if (envelope.event !== 'message.exchange') throw new Error(`unexpected event ${envelope.event}`);
    if (typeof envelope.instanceData?.token !== 'string') throw new Error('instanceData.token missing');
    const d = envelope.data;
    if (typeof d?.id !== 'string') throw new Error('missing id');
    const m = d.message;
    if (!m || typeof m !== 'object') throw new Error('missing message');
    for (const k of ['id', 'direction', 'timestamp', 'chat', 'sender', 'content']) {
      if (!(k in m)) throw new Error(`missing message.${k}`);
    }
    if (m.id !== d.id) throw new Error('message.id differs from id');
    if (!['incoming', 'outgoing'].includes(m.direction)) throw new Error(`bad direction ${m.direction}`);
    if (!RFC3339.test(m.timestamp)) throw new Error(`timestamp without zone: ${m.timestamp}`);
    if (!['private', 'group', 'newsletter'].includes(m.chat.type)) throw new Error(`bad chat type ${m.chat.type}`);
    if (typeof m.chat.isCommunity !== 'boolean') throw new Error('chat.isCommunity must be a boolean');
    for (const k of ['jid', 'lid', 'name']) {
      if (!(k in m.chat) || !(k in m.sender)) throw new Error(`missing chat/sender ${k}`);
    }
    if (typeof m.content?.text !== 'string') throw new Error('content.text must be a string');
    if (m.type === 'message_edit' && m.isEdit !== true) throw new Error('an edit without isEdit');
    const mediaTypes = ['image', 'video', 'audio', 'document', 'sticker', 'ptt', 'ptv'];
    if (m.media !== null && m.media !== undefined && !mediaTypes.includes(m.media.type)) {
      throw new Error(`bad media type ${m.media.type}`);
    }
    return {
      id: m.id as string,
      direction: m.direction as string,
      type: m.type as string,
      from: m.sender.jid as string,
      chat: { jid: m.chat.jid as string, isCommunity: m.chat.isCommunity as boolean },
      text: m.content.text as string,
      mediaType: (m.media?.type ?? null) as string | null,
      at: new Date(m.timestamp),
    };
  }

  /** The states the hosted product names (api/events/overview). */
  static parseInstanceState(envelope: any): string {
    if (envelope.event !== 'instance.state') throw new Error(`unexpected event ${envelope.event}`);
    const states = ['disconnected', 'connecting', 'qr_ready', 'connected', 'logged_out', 'temp_banned'];
    if (!states.includes(envelope.data?.state)) throw new Error(`unknown state ${envelope.data?.state}`);
    return envelope.data.state as string;
  }
}

describe('compatibility: a client of the hosted product, unchanged', function () {
  this.timeout(20_000);
  let node: TestNode;
  let receiver: WebhookReceiver;
  let client: HostedProductClient;

  before(async () => {
    node = await startTestNode({ ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
    receiver = await WebhookReceiver.start();
    client = new HostedProductClient(node.url, await node.createAccount('hosted'));
  });

  after(async () => {
    await receiver.stop();
    await node.stop();
  });

  it('from create (flat body, aliases) to an incoming message parsed from a webhook and a WebSocket frame', async () => {
    const created = await client.call('POST', '/api/instance/new', {
      name: 'legacy',
      disableHistorySync: true,
      ignoreGroupMessages: true,
      ignoreStatus: true,
      webhookEnabled: true,
      webhookURL: receiver.url,
      webhookMediaBase64: false,
      websocketEnabled: true,
      websocketMediaBase64: false,
      proxyUsername: 'not-used',
    });
    expect(created.settings).to.include({ disableHistorySync: true, ignoreGroupMessages: true, ignoreStatus: true });
    const instanceToken = created.instance.token as string;

    const settings = await client.call('GET', '/api/instance/getSettings/legacy');
    expect(settings.settings.ignoreStatus).to.equal(true);
    const hook = await client.call('GET', '/api/events/webhook/legacy?label=default');
    expect(hook.webhook).to.include({
      label: 'default',
      enabled: true,
      url: `${receiver.url}/`,
      byEvents: false,
      mediaBase64: false,
    });
    const ws = await client.call('GET', '/api/events/websocket/legacy');
    expect(ws.websocket.enabled).to.equal(true);

    const socket = new WebSocket(
      `${node.url.replace('http', 'ws')}/ws/legacy?token=${encodeURIComponent(instanceToken)}`,
    );
    const frames: any[] = [];
    socket.on('message', (raw: Buffer) => frames.push(JSON.parse(raw.toString())));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });

    expect((await client.call('GET', '/api/instance/connect/legacy')).status).to.equal('qr');
    await client.call('POST', '/api/sandbox/link/legacy', { number: '5511977770000' });
    const inbound = await client.call('POST', '/api/sandbox/inbound/legacy', {
      from: '5511966660000',
      text: 'pedido 42',
      pushName: 'Bia',
    });

    const deadline = Date.now() + 5000;
    const isMessage = (e: any) => e?.event === 'message.exchange';
    while ((!receiver.received.some((r) => isMessage(r.body)) || !frames.some(isMessage)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const fromHook = HostedProductClient.parseMessageExchange(receiver.received.find((r) => isMessage(r.body))!.body);
    const fromSocket = HostedProductClient.parseMessageExchange(frames.find(isMessage));
    socket.close();
    for (const parsed of [fromHook, fromSocket]) {
      expect(parsed).to.deep.include({
        id: inbound.messageId,
        direction: 'incoming',
        type: 'text',
        from: '5511966660000@s.whatsapp.net',
        chat: { jid: '5511966660000@s.whatsapp.net', isCommunity: false },
        text: 'pedido 42',
        mediaType: null,
      });
      expect(Math.abs(parsed.at.getTime() - Date.now())).to.be.below(10_000);
    }

    const states = receiver.received
      .filter((r) => r.body.event === 'instance.state')
      .map((r) => HostedProductClient.parseInstanceState(r.body));
    expect(states).to.include.members(['qr_ready', 'connected']);

    const sent = await client.call('POST', '/api/message/text/legacy', {
      number: '5511966660000',
      message: 'recebido',
    });
    expect(sent).to.deep.include({ status: 'sent' });
    expect(sent.data.messageId).to.be.a('string');
  });

  it('parses a voice note (ptt), an edit (message_edit, isEdit) and a revocation (message_revoke)', async () => {
    await client.call('POST', '/api/instance/new', { name: 'kinds', webhookEnabled: true, webhookURL: receiver.url });
    await client.call('GET', '/api/instance/connect/kinds');
    await client.call('POST', '/api/sandbox/link/kinds', { number: '5511977771111' });
    const from = '5511966661111';
    const inbound = (body: object) => client.call('POST', '/api/sandbox/inbound/kinds', { from, ...body });
    const voice = await inbound({ media: { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', ptt: true } });
    const round = await inbound({ media: { kind: 'video', mimetype: 'video/mp4', ptv: true } });
    const edit = await inbound({ edit: { messageId: voice.messageId, text: 'fixed' } });
    const revoke = await inbound({ revoked: { messageId: round.messageId } });
    const parsedOf = async (id: string) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const hit = receiver.received.find((r) => r.body.event === 'message.exchange' && r.body.data.id === id);
        if (hit) return HostedProductClient.parseMessageExchange(hit.body);
        if (Date.now() > deadline) throw new Error(`no message.exchange for ${id}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    expect(await parsedOf(voice.messageId)).to.include({ type: 'audio', mediaType: 'ptt' });
    expect(await parsedOf(round.messageId)).to.include({ type: 'video', mediaType: 'ptv' });
    expect(await parsedOf(edit.messageId)).to.include({ type: 'message_edit', text: 'fixed' });
    expect(await parsedOf(revoke.messageId)).to.include({ type: 'message_revoke', text: '' });
  });

  it('looks numbers up and reports where a message got to', async () => {
    const lookupFor = async (number: string) =>
      (await client.call('GET', `/api/chat/contacts/legacy?number=${number}`)).contact;
    const noNames = { first_name: null, full_name: null, push_name: null, business_name: null };
    expect(await lookupFor('5511977770000')).to.deep.include({
      found: true,
      jid: '5511977770000@s.whatsapp.net',
      lid: null,
      ...noNames,
    });
    expect(await lookupFor('5511900000000')).to.deep.equal({
      found: false,
      jid: null,
      lid: null,
      inAddressBook: false,
      ...noNames,
    });

    const sent = await client.call('POST', '/api/message/text/legacy', { number: '5511966660000', text: 'status?' });
    const status = await client.call('GET', `/api/chat/status/legacy?messageId=${sent.data.messageId}`);
    expect(status).to.deep.include({
      message_id: sent.data.messageId,
      direction: 'sent',
      chat_jid: '5511966660000@s.whatsapp.net',
    });
    expect(status.status).to.equal('sent');
    expect(status.status_code).to.equal(1);
    expect(status.timestamp).to.match(RFC3339);
    const own = await client.call('GET', '/api/profile/getAccount/legacy');
    expect(own.profile).to.deep.equal({
      jid: '5511977770000@s.whatsapp.net',
      lid: null,
      name: null,
      about: null,
      pictureUrl: null,
      isBusiness: false,
      profilePicture: null,
      profileName: null,
      profileStatus: null,
      phoneNumber: '5511977770000',
    });
    await client.call('POST', '/api/profile/account/legacy', { profileName: 'Loja', profileStatus: 'Aberto' });
    expect((await client.call('GET', '/api/profile/getAccount/legacy')).profile).to.deep.include({
      name: 'Loja',
      about: 'Aberto',
    });
    const missing = await fetch(`${node.url}/api/profile/getAccount/legacy?number=5511900000000`, {
      headers: { authorization: `Bearer ${(client as any).token}` },
    });
    expect(missing.status).to.equal(404);
    const res = await fetch(`${node.url}/api/chat/status/legacy?messageId=nope`, {
      headers: { authorization: `Bearer ${(client as any).token}` },
    });
    expect(res.status).to.equal(404);
  });

  it('uses the small spellings of the hosted product: DELETE logout, a label in the delete body, chatwoot/unlink', async () => {
    const created = await client.call('POST', '/api/instance/new', { name: 'spellings', webhookEnabled: false });
    expect(created.instance.id).to.be.a('string');
    for (const label of ['default', 'crm']) {
      await client.call('POST', '/api/events/webhook/spellings', { label, url: receiver.url, enabled: true });
    }
    // The label in the JSON body deletes that webhook, not `default`.
    const deleted = await client.call('DELETE', '/api/events/webhook/spellings', { label: 'crm' });
    expect(deleted.webhook).to.deep.equal({ label: 'crm' });
    const left = await client.call('GET', '/api/events/getWebhook/spellings');
    expect(left.webhooks.map((w: { label: string }) => w.label)).to.deep.equal(['default']);
    const conflicting = await fetch(`${node.url}/api/events/webhook/spellings?label=default`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${(client as any).token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'other' }),
    });
    expect(conflicting.status).to.equal(400);
    expect((await client.call('GET', '/api/events/getWebhook/spellings')).webhooks).to.have.length(1);

    const logout = await client.call('DELETE', '/api/instance/logout/spellings');
    expect(logout.instance).to.deep.include({ name: 'spellings' });
    const unlink = await fetch(`${node.url}/api/chatwoot/unlink/spellings`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${(client as any).token}` },
    });
    expect(unlink.status).to.equal(404);
    expect(((await unlink.json()) as { error: { message: string } }).error.message).to.equal(
      'no chatwoot integration to delete',
    );
  });
});
