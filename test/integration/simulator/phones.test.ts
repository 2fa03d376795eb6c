import { expect } from 'chai';
import { until } from '../../helpers/until.js';
import { pngImage } from '../../helpers/media-fixtures.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';
import type { ReceivedRecord } from '../../../simulator/index.js';

describe("the simulator's phones: real Signal clients that record what they decrypt", function () {
  this.timeout(20_000);
  let sim: TestSimulator;
  let ana: string;
  let ben: string;
  let cid: string;

  const received = (number: string, pred: (r: ReceivedRecord) => boolean) =>
    until(async () => (await sim.control.received(number)).find(pred), `${number} decrypts it`, 10_000);

  beforeEach(async () => {
    sim = await startTestSimulator();
    ana = (await sim.control.addPhone(undefined, 'Ana')).number;
    ben = (await sim.control.addPhone(undefined, 'Ben')).number;
    cid = (await sim.control.addPhone(undefined, 'Cid')).number;
  });

  afterEach(() => sim.close());

  it('exchange text and media, each decrypted by the other with its hash checked', async () => {
    const { id } = await sim.control.send(ana, { to: ben, text: 'oi Ben' });
    const text = await received(ben, (r) => r.id === id);
    expect(text).to.include({
      type: 'text',
      text: 'oi Ben',
      from: `${ana}@s.whatsapp.net`,
      connection: `phone:${ana}`,
    });
    const png = await pngImage(16, 16);
    const { id: mid } = await sim.control.send(ben, {
      to: ana,
      media: { kind: 'image', base64: png.toString('base64'), caption: 'pic' },
    });
    const image = await received(ana, (r) => r.id === mid);
    expect(image.media?.error).to.equal(undefined);
    expect(image.media?.size).to.equal(png.length);
    expect((await sim.control.ok('GET', `/phones/${ana}/receipts`)).map((r: any) => r.id)).to.include(id);
  });

  it('talk in a group with sender keys, and a vote on a poll is read by its creator', async () => {
    const group = await sim.control.ok('POST', '/groups', { creator: ana, subject: 'Friends', members: [ben, cid] });
    const { id } = await sim.control.send(ana, { to: group.jid, text: 'hello group' });
    for (const n of [ben, cid]) expect((await received(n, (r) => r.id === id)).chat).to.equal(group.jid);
    const { id: pollId } = await sim.control.send(ana, { to: ben, poll: { name: 'Tea?', options: ['yes', 'no'] } });
    await received(ben, (r) => r.id === pollId);
    const { id: voteId } = await sim.control.send(ben, { to: ana, pollVote: { pollId, options: ['no'] } });
    expect((await received(ana, (r) => r.id === voteId)).pollVote).to.deep.equal({ pollId, options: ['no'] });
  });

  it('a lost Signal session is reported as a decryption failure, and the retry receipt recovers the message', async () => {
    await sim.control.send(ana, { to: ben, text: 'one' });
    await received(ben, (r) => r.text === 'one');
    await sim.control.send(ben, { to: ana, text: 'two' });
    await received(ana, (r) => r.text === 'two');
    // Ben's phone forgets its session with Ana (what a restored backup or a corrupted store does).
    const anaLid = sim.simulator.phone(ana)!.account.lidJid;
    await sim.simulator.phone(ben)!.repo.deleteSession([`${ana}@s.whatsapp.net`, anaLid]);
    const { id } = await sim.control.send(ana, { to: ben, text: 'three' });
    const failures = await until(
      async () => {
        const mine = ((await sim.control.failures(ben)) as any[]).filter((f) => f.id === id);
        return mine.length > 0 && mine;
      },
      'a failure',
      10_000,
    );
    expect(failures[0]).to.include({ from: `${ana}@s.whatsapp.net` });
    expect((await received(ben, (r) => r.id === id)).text).to.equal('three');
  });

  it('a message relayed twice is recorded twice, the second marked duplicate', async () => {
    await sim.control.ok('POST', '/faults', { kind: 'duplicate', device: `${ben}@s.whatsapp.net` });
    const { id } = await sim.control.send(ana, { to: ben, text: 'once' });
    await until(
      async () => (await sim.control.received(ben)).filter((r) => r.id === id).length === 2,
      'two copies',
      10_000,
    );
    const copies = (await sim.control.received(ben)).filter((r) => r.id === id);
    expect(copies.map((c) => c.duplicate)).to.deep.equal([false, true]);
  });
});
