import { expect } from 'chai';
import { backoffDelay, decideDisconnect, statusCodeOf } from '../../../src/msgnet/baileys/disconnect-policy.js';
import { TEMP_BAN_REASON } from '../../../src/msgnet/msgnet-events.js';
import { boom } from '../../helpers/baileys/fake-baileys-socket.js';

describe('disconnect policy', () => {
  it('reads the Boom status code, or nothing', () => {
    expect(statusCodeOf(boom(515))).to.equal(515);
    expect(statusCodeOf(new Error('plain'))).to.equal(undefined);
    expect(statusCodeOf(undefined)).to.equal(undefined);
  });

  it('decides per DisconnectReason', () => {
    expect(decideDisconnect(boom(515))).to.deep.equal({ kind: 'restart' });
    for (const code of [428, 408, 500, 503]) {
      expect(decideDisconnect(boom(code)).kind, String(code)).to.equal('backoff');
    }
    expect(decideDisconnect(boom(440))).to.deep.equal({ kind: 'replaced', reason: 'replaced by another session' });
    expect(decideDisconnect(boom(401))).to.include({ kind: 'stop', state: 'loggedout', clearAuth: true });
    expect(decideDisconnect(boom(411))).to.include({ kind: 'stop', state: 'loggedout', clearAuth: true });
    expect(decideDisconnect(boom(403))).to.include({ kind: 'stop', state: 'loggedout', clearAuth: false });
    expect(decideDisconnect(boom(408, 'QR refs attempts ended'))).to.include({ kind: 'stop', state: 'disconnected' });
    expect(decideDisconnect(new Error('socket hang up')).kind).to.equal('backoff');
    // WhatsApp's login failure 402 (a temporary ban) is named, for instance.state `temp_banned`.
    expect(decideDisconnect(boom(402, 'Connection Failure'))).to.deep.equal({
      kind: 'backoff',
      reason: TEMP_BAN_REASON,
    });
  });

  it('names the cause when the WebSocket itself failed: the network could not be reached', () => {
    const dns = Object.assign(boom(408, 'WebSocket Error (getaddrinfo ENOTFOUND web.whatsapp.com)'), {
      data: Object.assign(new Error('getaddrinfo ENOTFOUND web.whatsapp.com'), { code: 'ENOTFOUND' }),
    });
    expect(decideDisconnect(dns)).to.deep.equal({
      kind: 'backoff',
      reason: 'network unreachable',
      cause: 'getaddrinfo ENOTFOUND web.whatsapp.com',
    });
    // Without the original error, the text inside the parentheses.
    expect(decideDisconnect(boom(408, 'WebSocket Error (connect ECONNREFUSED 127.0.0.1:9)'))).to.include({
      cause: 'connect ECONNREFUSED 127.0.0.1:9',
    });
    expect(decideDisconnect(boom(408, 'Connection was lost'))).to.deep.equal({
      kind: 'backoff',
      reason: 'connection lost',
    });
  });

  it('backs off exponentially with jitter, capped', () => {
    const opts = { baseMs: 1_000, maxMs: 60_000 };
    expect(backoffDelay(0, opts, () => 0)).to.equal(500);
    expect(backoffDelay(0, opts, () => 1)).to.equal(1_000);
    expect(backoffDelay(3, opts, () => 1)).to.equal(8_000);
    expect(backoffDelay(10, opts, () => 1)).to.equal(60_000);
    expect(backoffDelay(500, opts, () => 0)).to.equal(30_000);
  });
});
