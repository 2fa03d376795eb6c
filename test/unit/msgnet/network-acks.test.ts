import { expect } from 'chai';
import { pino } from 'pino';
import { NetworkAcks } from '../../../src/msgnet/baileys/network-acks.js';

describe('NetworkAcks: receipts and call acks sent once the owner stored their events', () => {
  const log = pino({ level: 'silent' });

  it('sends a message receipt only when its event is acknowledged, once', async () => {
    const acks = new NetworkAcks(log);
    const sent: string[] = [];
    acks.defer('M1', async () => void sent.push('M1'));
    const acknowledge = acks.acknowledge('M1');
    expect(sent).to.deep.equal([]);
    expect(acks.waiting).to.equal(1);
    acknowledge();
    acknowledge();
    expect(sent).to.deep.equal(['M1']);
    expect(acks.waiting).to.equal(0);
  });

  it('a copy of a message that failed to decrypt, settled at once, does not release the receipt of the copy sent again', () => {
    const acks = new NetworkAcks(log);
    const sent: string[] = [];
    const failed = { key: { id: 'M9' } };
    const resent = { key: { id: 'M9' } };
    // Baileys hands over the resent copy's receipt before it upserts the failed copy (an ignored stub).
    acks.deferMessage(resent, async () => void sent.push('M9'));
    acks.acknowledgeMessage(failed, 'M9')();
    expect(sent).to.deep.equal([]);
    expect(acks.waiting).to.equal(1);
    acks.acknowledgeMessage(resent, 'M9')();
    expect(sent).to.deep.equal(['M9']);
    expect(acks.waiting).to.equal(0);
  });

  it('a call ack handed over after its event was settled goes at once (early settlement)', () => {
    const acks = new NetworkAcks(log);
    const sent: string[] = [];
    acks.acknowledge('C1', true)();
    acks.defer('C1', async () => void sent.push('C1'));
    expect(sent).to.deep.equal(['C1']);
  });

  it('a message settled with no receipt waiting remembers nothing (its receipt, if any, came first)', () => {
    const acks = new NetworkAcks(log);
    acks.acknowledge('M2')();
    const sent: string[] = [];
    acks.defer('M2', async () => void sent.push('M2'));
    expect(sent).to.deep.equal([]);
  });

  it('after the socket closed nothing is sent: the network redelivers to the next connection', () => {
    const acks = new NetworkAcks(log);
    const sent: string[] = [];
    acks.defer('M3', async () => void sent.push('M3'));
    const acknowledge = acks.acknowledge('M3');
    acks.close();
    acknowledge();
    acks.defer('M4', async () => void sent.push('M4'));
    expect(sent).to.deep.equal([]);
  });

  it('a failing send is logged, never thrown at the owner', async () => {
    const acks = new NetworkAcks(log);
    acks.defer('M5', () => Promise.reject(new Error('socket closed')));
    expect(() => acks.acknowledge('M5')()).to.not.throw();
    await new Promise((r) => setImmediate(r));
  });
});
