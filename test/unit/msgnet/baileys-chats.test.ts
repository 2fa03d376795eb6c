import { expect } from 'chai';
import { ForbiddenError, TimeoutError } from '../../../src/errors.js';
import { networkRefusal } from '../../../src/msgnet/baileys/network-refusal.js';
import { connectedSession } from '../../helpers/baileys/baileys-harness.js';

const PEER = '5511988887777@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

/** A Boom-shaped refusal, as Baileys raises an IQ error. */
const boom = (message: string, statusCode: number) =>
  Object.assign(new Error(message), { isBoom: true, output: { statusCode } });

describe('BaileysSession: chat operations', () => {
  it('archive and clear name the chat’s newest message (a group message with its author); none is an empty range', async () => {
    const h = await connectedSession();
    await h.session.chats.archive('5511988887777', true, { id: 'M9', fromMe: false, timestamp: 1_700_000_123_456 });
    await h.session.chats.archive(GROUP, false);
    await h.session.chats.clear(GROUP, { id: 'G1', fromMe: false, participant: PEER, timestamp: 1_700_000_000_000 });
    expect(h.factory.last.callsOf('chatModify')).to.deep.equal([
      [
        {
          archive: true,
          lastMessages: [{ key: { remoteJid: PEER, id: 'M9', fromMe: false }, messageTimestamp: 1_700_000_123 }],
        },
        PEER,
      ],
      [{ archive: false, lastMessages: [] }, GROUP],
      [
        {
          clear: true,
          lastMessages: [
            { key: { remoteJid: GROUP, id: 'G1', fromMe: false, participant: PEER }, messageTimestamp: 1_700_000_000 },
          ],
        },
        GROUP,
      ],
    ]);
  });

  it('pin, mute (until a time, always = -1, or null) and block map to chatModify and updateBlockStatus', async () => {
    const h = await connectedSession();
    await h.session.chats.pin(PEER, true);
    await h.session.chats.mute(PEER, 1_700_003_600_000);
    await h.session.chats.mute(PEER, -1);
    await h.session.chats.mute(PEER, null);
    await h.session.chats.block('5511988887777', true);
    await h.session.chats.block(PEER, false);
    expect(h.factory.last.callsOf('chatModify')).to.deep.equal([
      [{ pin: true }, PEER],
      [{ mute: 1_700_003_600_000 }, PEER],
      [{ mute: -1 }, PEER],
      [{ mute: null }, PEER],
    ]);
    expect(h.factory.last.callsOf('updateBlockStatus')).to.deep.equal([
      [PEER, 'block'],
      [PEER, 'unblock'],
    ]);
  });

  it('check asks onWhatsApp once per number and keeps the order and spelling asked', async () => {
    const h = await connectedSession();
    expect(await h.session.chats.check(['+55 11 98888-7777', '0001'])).to.deep.equal([
      { number: '+55 11 98888-7777', exists: true, jid: PEER },
      { number: '0001', exists: false, jid: null },
    ]);
  });

  it("the network's refusals become typed errors: 401/403 forbidden, 408 and timeouts 504", async () => {
    const h = await connectedSession();
    h.factory.last.chatModify = async () => {
      throw boom('forbidden', 403);
    };
    const err = await h.session.chats.pin(PEER, true).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ForbiddenError);
    expect((err as Error).message).to.equal('WhatsApp refused to pin the chat: forbidden');
    expect(networkRefusal(boom('Timed Out', 408), 'x')).to.be.instanceOf(TimeoutError);
    expect(networkRefusal(new Error('Timed Out'), 'x')).to.be.instanceOf(TimeoutError);
    const other = new Error('socket closed');
    expect(networkRefusal(other, 'x')).to.equal(other);
  });
});

describe('BaileysSession: the address book', () => {
  const LID = '99887766554433@lid';
  const OTHER = '5511977776666@s.whatsapp.net';

  it('merges history-sync contacts, contact actions and push names, by phone number or LID, and keeps them', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.emit('messaging-history.set', {
      chats: [],
      messages: [],
      contacts: [
        { id: LID, notify: 'Ann' },
        { id: OTHER, name: 'Otto Saved', verifiedName: 'Otto Shop' },
      ],
      isLatest: true,
    });
    // The phone's contact action names the LID with its number: the LID-only entry moves under the number.
    sock.emit('contacts.upsert', [{ id: PEER, lid: LID, name: 'Ann Saved', phoneNumber: PEER }]);
    // A message's push name (Baileys reports it as a partial update): only that field changes.
    sock.emit('contacts.update', [{ id: PEER, notify: 'Annie' }]);
    sock.emit('contacts.update', [{ id: GROUP, notify: 'not a person' }]);
    const expected = [
      { jid: OTHER, lid: null, pushName: null, fullName: 'Otto Saved', firstName: null, businessName: 'Otto Shop' },
      { jid: PEER, lid: LID, pushName: 'Annie', fullName: 'Ann Saved', firstName: null, businessName: null },
    ];
    const byJid = (a: { jid: string | null }, b: { jid: string | null }) => (a.jid ?? '').localeCompare(b.jid ?? '');
    expect((await h.session.chats.contacts()).sort(byJid)).to.deep.equal(expected);
    await h.session.close();
    expect(h.store.data.has(`contacts:${LID}`)).to.equal(false);
    expect(JSON.parse(h.store.data.get(`contacts:${PEER}`)!)).to.deep.equal(expected[1]);

    const again = await connectedSession({ store: h.store });
    expect((await again.session.chats.contacts()).sort(byJid)).to.deep.equal(expected);
    // A later update naming the person by LID only lands on the same entry.
    again.factory.last.emit('contacts.update', [{ id: LID, notify: 'Ann B.' }]);
    const after = await again.session.chats.contacts();
    expect(after).to.have.length(2);
    expect(after.find((c) => c.jid === PEER)).to.include({ lid: LID, pushName: 'Ann B.' });
  });
});
