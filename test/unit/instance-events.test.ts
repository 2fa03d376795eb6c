import { expect } from 'chai';
import {
  hostedState,
  instanceState,
  mediaType,
  messageExchange,
  toInstanceEvent,
} from '../../src/events/instance-events.js';
import { TEMP_BAN_REASON } from '../../src/msgnet/msgnet-events.js';
import type { NormalizedMessage } from '../../src/msgnet/msgnet-events.js';

const ANA = '5511912345678@s.whatsapp.net';

function message(extra: Partial<NormalizedMessage> = {}): NormalizedMessage {
  return {
    id: 'M1',
    fromMe: false,
    timestamp: Date.UTC(2026, 10, 22, 3, 4, 5),
    chat: { jid: ANA, type: 'private', name: 'Ana' },
    sender: { jid: ANA, name: 'Ana' },
    type: 'text',
    text: 'hello',
    ...extra,
  };
}

describe('instance events in the hosted layout', () => {
  it('message.exchange: data.message carries id, direction, timestamp, chat, sender and content{text}', () => {
    const data = messageExchange(message(), 'msgnet');
    const chat = { jid: ANA, lid: null, name: 'Ana', type: 'private', isCommunity: false };
    expect(data).to.deep.include({ id: 'M1', direction: 'incoming', chat, recipient: ANA });
    expect(data.message).to.deep.include({
      id: 'M1',
      direction: 'incoming',
      timestamp: '2026-11-22T03:04:05.000Z',
      chat,
      sender: { jid: ANA, lid: null, name: 'Ana' },
      type: 'text',
      content: { text: 'hello' },
      text: 'hello',
      isEdit: false,
    });
    const out = messageExchange(
      message({ fromMe: true, chat: { jid: 'G@g.us', type: 'group', isCommunity: true } }),
      'api',
    );
    expect(out.message).to.deep.include({ direction: 'outgoing', source: 'api' });
    expect(out.message.chat.isCommunity).to.equal(true);
  });

  it('edits are message_edit with isEdit, revocations message_revoke; their objects stay', () => {
    const edit = messageExchange(
      message({ type: 'edit', text: 'fixed', edit: { messageId: 'M0', text: 'fixed' } }),
      'x',
    );
    expect(edit.message).to.deep.include({
      type: 'message_edit',
      isEdit: true,
      content: { text: 'fixed' },
      edit: { messageId: 'M0', text: 'fixed' },
    });
    const revoke = messageExchange(message({ type: 'revoked', text: '', revoked: { messageId: 'M0' } }), 'x');
    expect(revoke.message).to.deep.include({ type: 'message_revoke', isEdit: false, revoked: { messageId: 'M0' } });
  });

  it('media.type: ptt for a voice note, ptv for a round video note, else the kind (kept in media.kind)', () => {
    expect(mediaType({ kind: 'audio', mimetype: 'audio/ogg', ptt: true })).to.equal('ptt');
    expect(mediaType({ kind: 'audio', mimetype: 'audio/mpeg' })).to.equal('audio');
    expect(mediaType({ kind: 'video', mimetype: 'video/mp4', ptv: true })).to.equal('ptv');
    expect(mediaType({ kind: 'video', mimetype: 'video/mp4' })).to.equal('video');
    // The flags mean something only for their own kind.
    expect(mediaType({ kind: 'image', mimetype: 'image/jpeg', ptt: true, ptv: true })).to.equal('image');
    const voice = messageExchange(
      message({ type: 'media', text: '', media: { kind: 'audio', mimetype: 'audio/ogg', ptt: true } }),
      'x',
    );
    expect(voice.message.type).to.equal('audio');
    expect(voice.message.media).to.deep.include({ type: 'ptt', kind: 'audio', mimetype: 'audio/ogg' });
  });

  it('instance.state: the hosted names, our own in connectionState, temp_banned for a temporary ban', () => {
    expect(hostedState('qr')).to.equal('qr_ready');
    expect(hostedState('loggedout')).to.equal('logged_out');
    expect(hostedState('connecting')).to.equal('connecting');
    expect(hostedState('connected')).to.equal('connected');
    expect(hostedState('disconnected', 'connection lost')).to.equal('disconnected');
    expect(hostedState('disconnected', TEMP_BAN_REASON)).to.equal('temp_banned');
    expect(instanceState('sales', 'qr', Date.UTC(2026, 0, 1))).to.deep.equal({
      event: 'instance.state',
      data: { instance: 'sales', state: 'qr_ready', connectionState: 'qr', timestamp: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('message.status: read_self and played_self pass through; call.update carries its reason', () => {
    const status = toInstanceEvent({
      type: 'delivery',
      chatJid: ANA,
      recipient: ANA,
      status: 'read_self',
      messageIds: ['M1'],
      timestamp: 0,
    });
    expect(status.data).to.include({ status: 'read_self', recipient: ANA });
    const call = toInstanceEvent({
      type: 'call',
      callId: 'C1',
      from: ANA,
      status: 'terminated',
      reason: 'timeout',
      isVideo: false,
      isGroup: false,
      timestamp: 0,
    });
    expect(call.data).to.include({ status: 'terminated', reason: 'timeout' });
  });
});
