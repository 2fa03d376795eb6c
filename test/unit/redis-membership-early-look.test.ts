import { expect } from 'chai';
import { pino } from 'pino';
import type { NodeInfo } from '../../src/cluster/membership.js';
import { RedisMembership } from '../../src/cluster/redis-membership.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { ManualClock } from '../helpers/manual-clock.js';

const HEARTBEAT = 500;
const TIMEOUT = 2000;

/** A Redis holding this node's record and a peer's whose `heartbeatAt` the test sets; counts the lists read. */
function fakeRedis(peer: () => NodeInfo) {
  const state = { looks: 0 };
  const redis = {
    set: async () => 'OK',
    zadd: async () => 1,
    zrem: async () => 0,
    zrange: async () => {
      state.looks++;
      return ['me', 'peer'];
    },
    mget: async () => [
      JSON.stringify({ nodeId: 'me', url: '', startedAt: '', actors: 0, heartbeatAt: new Date().toISOString() }),
      JSON.stringify(peer()),
    ],
  } as unknown as RedisClient;
  return { redis, state };
}

const transport = { subscribe: async () => async () => undefined, publish: async () => 0 } as unknown as Transport;

async function looksInOneHeartbeat(peerBeatMsAgo: () => number): Promise<number> {
  const clock = new ManualClock();
  const peer = (): NodeInfo => ({
    nodeId: 'peer',
    url: '',
    startedAt: '',
    actors: 0,
    heartbeatAt: new Date(Date.now() - peerBeatMsAgo()).toISOString(),
  });
  const { redis, state } = fakeRedis(peer);
  const m = new RedisMembership(
    redis,
    transport,
    { nodeId: 'me', url: () => '', actors: () => 0, heartbeatMs: HEARTBEAT, timeoutMs: TIMEOUT, clock },
    pino({ level: 'silent' }),
  );
  await m.start();
  state.looks = 0;
  await clock.advance(HEARTBEAT - 1);
  await m.stop();
  return state.looks;
}

describe('RedisMembership: early looks at a record due before the next heartbeat', () => {
  it('looks again when a peer record is due before the next heartbeat, and not at all while none is', async () => {
    // Due in about 200 ms: one look then (the record is still there: the fake never expires it).
    expect(await looksInOneHeartbeat(() => TIMEOUT - 200)).to.be.within(1, 3);
    // A fresh record is due in 2 s: nothing before the next heartbeat.
    expect(await looksInOneHeartbeat(() => 0)).to.equal(0);
  });

  it('looks at most three times between heartbeats, however its clock says the record is late', async () => {
    // A peer whose record always looks 45 ms past due (its clock behind, or Redis slow to expire): each look asks for another.
    expect(await looksInOneHeartbeat(() => TIMEOUT + 50)).to.equal(3);
  });
});
