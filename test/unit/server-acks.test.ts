import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { NotConnectedError, OutcomeUnknownError } from '../../src/errors.js';
import { SocketEndedError } from '../../src/msgnet/baileys/baileys-auth-state.js';
import { ServerAcks, awaitingServerAcks } from '../../src/msgnet/baileys/server-acks.js';
import type { BaileysSocket } from '../../src/msgnet/baileys/socket-port.js';
import { ManualClock } from '../helpers/manual-clock.js';

const settled = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('ServerAcks: a send answers once WhatsApp acked it', () => {
  it('resolves on the ack, also on one that came before the send waited', async () => {
    const acks = new ServerAcks(new ManualClock(), 10_000);
    const waiting = acks.wait('m1');
    expect(await settled(waiting)).to.equal('pending');
    acks.acked('m1');
    expect(await settled(waiting)).to.equal('resolved');
    acks.acked('m2');
    expect(await settled(acks.wait('m2'))).to.equal('resolved');
  });

  it('makes the outcome unknown when no ack comes in time, or the socket closes first', async () => {
    const clock = new ManualClock();
    const acks = new ServerAcks(clock, 10_000);
    const timedOut = acks.wait('m1');
    timedOut.catch(() => undefined);
    const cut = acks.wait('m2');
    cut.catch(() => undefined);
    await clock.advance(10_000);
    expect(await timedOut.catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
    acks.close();
    expect(await cut.catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
    expect(await acks.wait('m3').catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
  });

  it('tells its owner of a send that waited out the timeout (the socket is likely dead), not of an acked or cut one', async () => {
    const clock = new ManualClock();
    let timeouts = 0;
    const acks = new ServerAcks(clock, 10_000, () => timeouts++);
    const acked = acks.wait('m1');
    const unacked = acks.wait('m2');
    unacked.catch(() => undefined);
    acks.acked('m1');
    await acked;
    await clock.advance(9_999);
    expect(timeouts).to.equal(0);
    await clock.advance(1);
    expect(await unacked.catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
    expect(timeouts).to.equal(1);
    const cut = acks.wait('m3');
    cut.catch(() => undefined);
    acks.close();
    await clock.advance(20_000);
    expect(timeouts).to.equal(1);
  });

  it('wraps a socket: sendMessage resolves after the ack frame, and the rest of the socket is its own', async () => {
    const ws = new EventEmitter();
    const raw = {
      ws,
      get user() {
        return { id: 'live' };
      },
      sendMessage: async () => ({ key: { id: 'm9' } }),
      relayMessage: async () => 'm10',
    } as unknown as BaileysSocket;
    const { sock, detach } = awaitingServerAcks(raw, new ServerAcks(new ManualClock(), 10_000));
    expect(sock.user?.id).to.equal('live');
    const sent = sock.sendMessage('x@s.whatsapp.net', { text: 'hi' });
    expect(await settled(sent)).to.equal('pending');
    ws.emit('CB:ack,class:message', { attrs: { id: 'm9' } });
    expect(await settled(sent)).to.equal('resolved');
    const relayed = sock.relayMessage('x@s.whatsapp.net', {}, { messageId: 'm10' });
    relayed.catch(() => undefined);
    ws.emit('close');
    expect(await relayed.catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
    detach();
  });

  it("a send Baileys refuses with Connection Closed (428: never written) is 'not connected', to be sent again", async () => {
    const closed = Object.assign(new Error('Connection Closed'), { output: { statusCode: 428 } });
    const other = new Error('bad media');
    const raw = {
      ws: new EventEmitter(),
      sendMessage: async () => Promise.reject(closed),
      relayMessage: async () => Promise.reject(other),
    } as unknown as BaileysSocket;
    const { sock, detach } = awaitingServerAcks(raw, new ServerAcks(new ManualClock(), 10_000));
    expect(await sock.sendMessage('x@s.whatsapp.net', { text: 'hi' }).catch((e: unknown) => e)).to.be.instanceOf(
      NotConnectedError,
    );
    expect(await sock.relayMessage('x@s.whatsapp.net', {}, {}).catch((e: unknown) => e)).to.equal(other);
    detach();
  });

  it('a send whose socket write failed (a reset connection) has an unknown outcome, to be sent again under its id', async () => {
    const reset = Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET', syscall: 'write' });
    const raw = {
      ws: new EventEmitter(),
      sendMessage: async () => Promise.reject(reset),
      relayMessage: async () => Promise.reject(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
    } as unknown as BaileysSocket;
    const { sock, detach } = awaitingServerAcks(raw, new ServerAcks(new ManualClock(), 10_000));
    const err = await sock.sendMessage('x@s.whatsapp.net', { text: 'hi' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutcomeUnknownError);
    expect((err as Error).message).to.include('ECONNRESET');
    expect((err as Error).cause).to.equal(reset);
    expect(await sock.relayMessage('x@s.whatsapp.net', {}, {}).catch((e: unknown) => e)).to.be.instanceOf(
      OutcomeUnknownError,
    );
    detach();
  });

  it('a send whose socket ended before its Signal keys were stored has an unknown outcome, to be sent again under its id', async () => {
    const ended = new SocketEndedError();
    const raw = { ws: new EventEmitter(), sendMessage: async () => Promise.reject(ended) } as unknown as BaileysSocket;
    const { sock, detach } = awaitingServerAcks(raw, new ServerAcks(new ManualClock(), 10_000));
    const err = await sock.sendMessage('x@s.whatsapp.net', { text: 'hi' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OutcomeUnknownError);
    expect((err as Error).cause).to.equal(ended);
    detach();
  });

  it("a call rejection WhatsApp never answers waits the ack timeout, not Baileys' 60 s query timeout, and ends the socket", async () => {
    const clock = new ManualClock();
    let timeouts = 0;
    const answered: string[] = [];
    const raw = {
      ws: new EventEmitter(),
      // Baileys' rejectCall is a query: it resolves on the server's answer, or rejects after 60 s.
      rejectCall: (callId: string) =>
        callId === 'C1' ? Promise.resolve(void answered.push(callId)) : new Promise<void>(() => undefined),
    } as unknown as BaileysSocket;
    const { sock, detach } = awaitingServerAcks(raw, new ServerAcks(clock, 10_000, () => timeouts++));
    await sock.rejectCall('C1', 'x@s.whatsapp.net');
    expect(answered).to.deep.equal(['C1']);
    const hanging = sock.rejectCall('C2', 'x@s.whatsapp.net');
    hanging.catch(() => undefined);
    await clock.advance(9_999);
    expect(await settled(hanging)).to.equal('pending');
    await clock.advance(1);
    expect(await hanging.catch((e: unknown) => e)).to.be.instanceOf(OutcomeUnknownError);
    expect(timeouts).to.equal(1);
    detach();
  });
});
