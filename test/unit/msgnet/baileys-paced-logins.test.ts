import { expect } from 'chai';
import { BaileysDriver } from '../../../src/msgnet/baileys/baileys-driver.js';
import type { MsgNetSession } from '../../../src/msgnet/msgnet-driver.js';
import { DEFAULT_SETTINGS } from '../../../src/store/records.js';
import { seedLinkedCreds, silentLog } from '../../helpers/baileys/baileys-harness.js';
import { FakeSocketFactory, boom } from '../../helpers/baileys/fake-baileys-socket.js';
import type { FakeSocket } from '../../helpers/baileys/fake-baileys-socket.js';
import { MemoryAuthStore } from '../../helpers/baileys/memory-auth-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';

/** A driver at `rate` logins a second and linked sessions named by who, each away since its `awaySince`. */
async function fleet(rate: number, awaySince: Record<string, number>) {
  const clock = new ManualClock();
  const factory = new FakeSocketFactory();
  const driver = new BaileysDriver({
    clock,
    makeSocket: factory.make,
    backoff: { baseMs: 10, maxMs: 40 },
    random: () => 0,
    connectRatePerSecond: rate,
  });
  const sessions = new Map<string, MsgNetSession>();
  const states = new Map<string, string[]>();
  for (const [who, since] of Object.entries(awaySince)) {
    const store = new MemoryAuthStore();
    seedLinkedCreds(store);
    const session = await driver.open({
      instanceId: who,
      auth: store,
      proxy: () => undefined,
      settings: () => DEFAULT_SETTINGS,
      emit: (event) => {
        if (event.type === 'connection') states.set(who, [...(states.get(who) ?? []), event.state]);
      },
      log: silentLog.child({ who }),
      awaySince: since,
    });
    sessions.set(who, session);
  }
  /** Whose session a socket belongs to (its logger carries the binding). */
  const owner = (sock: FakeSocket) => (sock.config.logger as typeof silentLog).bindings().who as string;
  return { clock, factory, driver, sessions, owner, states };
}

describe('Baileys sessions log in through the node’s pacer', () => {
  it('resumed sessions log in at the configured rate, the one away the longest first', async () => {
    const f = await fleet(2, { c: 3_000, a: 1_000, d: 4_000, b: 2_000 });
    for (const s of f.sessions.values()) await s.resume();
    expect(f.factory.sockets, 'no socket before its turn').to.have.length(0);
    expect(f.states.get('d'), 'waiting for its turn is connecting').to.deep.equal(['connecting']);
    await f.clock.advance(1);
    expect(f.factory.sockets.map(f.owner)).to.deep.equal(['a']);
    await f.clock.advance(1_000);
    expect(f.factory.sockets.map(f.owner)).to.deep.equal(['a', 'b', 'c']);
    await f.clock.advance(1_000);
    expect(f.factory.sockets.map(f.owner)).to.deep.equal(['a', 'b', 'c', 'd']);
    await f.driver.close();
  });

  it('a client’s reconnect goes ahead of the sessions that wait', async () => {
    const f = await fleet(1, { a: 1_000, b: 2_000, c: 3_000 });
    for (const s of f.sessions.values()) await s.resume();
    await f.clock.advance(1);
    await f.sessions.get('c')!.reconnect();
    await f.clock.advance(1_000);
    expect(f.factory.sockets.map(f.owner)).to.deep.equal(['a', 'c']);
    await f.driver.close();
  });

  it('a 429 on login pauses every login of the node for at least a second, and the refused one logs in first after it', async () => {
    const f = await fleet(10, { a: 1_000, b: 2_000, c: 3_000, d: 4_000 });
    for (const s of f.sessions.values()) await s.resume();
    await f.clock.advance(1);
    f.factory.sockets[0]!.close(boom(429, 'rate-overlimit'));
    expect(f.driver.pacer!.state).to.equal('backing-off');
    await f.clock.advance(999);
    expect(f.factory.sockets.map(f.owner), 'nothing during the pause').to.deep.equal(['a']);
    await f.clock.advance(2_000);
    const after = f.factory.sockets.slice(1).map(f.owner);
    expect(after[0], 'the refused one, away the longest').to.equal('a');
    expect(after).to.include.members(['b', 'c', 'd']);
    expect(f.driver.pacer!.refusals).to.equal(1);
    await f.driver.close();
  });

  it('a session closed while waiting for its turn never opens a socket', async () => {
    const f = await fleet(1, { a: 1_000, b: 2_000 });
    for (const s of f.sessions.values()) await s.resume();
    await f.sessions.get('b')!.close();
    await f.clock.advance(5_000);
    expect(f.factory.sockets.map(f.owner)).to.deep.equal(['a']);
    expect(f.driver.pacer!.waiting).to.equal(0);
    await f.driver.close();
  });
});
