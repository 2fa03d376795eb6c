import { expect } from 'chai';
import { parseSamples, sampleSum } from '../helpers/prometheus-text.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { Sample } from '../helpers/prometheus-text.js';
import { ClusterFixture, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';

async function scrape(node: NodeProcess): Promise<Sample[]> {
  const res = await node.api.get('/metrics', { token: CLUSTER_ADMIN_TOKEN });
  expect(res.status, res.text).to.equal(200);
  return parseSamples(res.text);
}

describe('cluster: metrics of node processes', function () {
  this.timeout(90_000);
  let c: ClusterFixture;
  let receiver: WebhookReceiver;

  before(async function () {
    this.timeout(60_000);
    receiver = await WebhookReceiver.start();
    c = await ClusterFixture.start(2, {
      RATE_LIMIT_PER_MINUTE: '100000',
      TEST_PROBE_WRITE_MS: '0',
      HANDOFF_MOVES: '100',
      ALLOW_PRIVATE_URLS: 'true',
    });
    // 24 so that placement gives each of the two nodes some (all on one: a chance in 8 million; with 12, one in 2,000).
    await c.seed(24);
    await c.waitSettled(15_000);
  });

  after(async () => {
    await c?.stop();
    await receiver?.stop();
  });

  it('counts calls routed to another node as remote and calls served here as local; actors owned per node', async () => {
    const owners = await c.owners();
    const [a, b] = c.nodes as [NodeProcess, NodeProcess];
    const names = c.instanceIds.map((_, i) => `inst-${i}`);
    const owned = (node: NodeProcess) => owners.filter((o) => o === node.nodeId).length;
    const before = await scrape(a);
    // Through node a: the instances b owns are remote calls, a's own are local.
    for (const name of names) expect((await c.probe(a, name, 'describe')).status).to.equal(200);
    const after = await scrape(a);
    const moved = (labels: Record<string, string>) =>
      sampleSum(after, 'switchboard_routed_call_duration_seconds_count', labels) -
      sampleSum(before, 'switchboard_routed_call_duration_seconds_count', labels);
    expect(moved({ target: 'remote', outcome: 'ok' })).to.equal(owned(b));
    expect(moved({ target: 'local', outcome: 'ok' })).to.equal(owned(a));
    expect(owned(a)).to.be.greaterThan(0);
    expect(owned(b)).to.be.greaterThan(0);
    expect(sampleSum(after, 'switchboard_actors_owned')).to.equal(owned(a));
    expect(sampleSum(await scrape(b), 'switchboard_actors_owned')).to.equal(owned(b));
    // Both nodes renew their leases (TTL 2 s: a round every ~0.7 s once they hold some).
    for (const node of [a, b]) {
      const deadline = Date.now() + 5000;
      while (
        sampleSum(await scrape(node), 'switchboard_lease_renew_duration_seconds_count') === 0 &&
        Date.now() < deadline
      ) {
        await sleep(100);
      }
      expect(
        sampleSum(await scrape(node), 'switchboard_lease_renew_duration_seconds_count'),
        node.nodeId,
      ).to.be.greaterThan(0);
    }
  });

  it('a joining node: the old nodes count handoffs, the new one activations', async () => {
    const old = [...c.nodes];
    const handoffsBefore = await Promise.all(
      old.map(async (n) => sampleSum(await scrape(n), 'switchboard_actor_handoffs_total')),
    );
    const joined = await c.addNode();
    await c.waitForMembers(3);
    await c.waitSettled(20_000);
    const moved = (await c.owners()).filter((o) => o === joined.nodeId).length;
    expect(moved).to.be.greaterThan(0);
    await sleep(100);
    const handoffsAfter = await Promise.all(
      old.map(async (n) => sampleSum(await scrape(n), 'switchboard_actor_handoffs_total')),
    );
    expect(handoffsAfter.reduce((s, x) => s + x, 0) - handoffsBefore.reduce((s, x) => s + x, 0)).to.equal(moved);
    const fresh = await scrape(joined);
    expect(sampleSum(fresh, 'switchboard_actor_activations_total')).to.equal(moved);
    expect(sampleSum(fresh, 'switchboard_actor_stops_total', { reason: 'handoff' })).to.equal(0);
  });

  it('every node reports the depth of the shared webhook queue', async () => {
    const [a, b] = c.nodes as [NodeProcess, NodeProcess];
    const created = await a.api.post(
      '/api/instance/new',
      { name: 'hooked', webhookEnabled: true, webhookURL: receiver.url, webhookEvents: ['message.exchange'] },
      { token: c.accountToken },
    );
    expect(created.status, created.text).to.equal(201);
    const token = created.body.instance.token as string;
    expect((await a.api.get('/api/instance/connect/hooked', { token })).status).to.equal(200);
    expect((await a.api.post('/api/sandbox/link/hooked', {}, { token })).status).to.equal(200);
    expect(sampleSum(await scrape(b), 'switchboard_webhook_queue_depth')).to.equal(0);
    // The receiver hangs: the deliveries stay in the stream, taken but not settled.
    receiver.respond = () => 'hang';
    for (let i = 0; i < 3; i++) {
      expect(
        (await b.api.post('/api/sandbox/inbound/hooked', { from: '5511955550000', text: `m${i}` }, { token })).status,
      ).to.equal(200);
    }
    const depthOf = async (n: NodeProcess) => sampleSum(await scrape(n), 'switchboard_webhook_queue_depth');
    // The events are queued as the owner handles the messages, right after the inbound calls return.
    const deadline = Date.now() + 5000;
    while ((await depthOf(a)) < 3 && Date.now() < deadline) await sleep(50);
    expect(await depthOf(a)).to.equal(3);
    expect(await depthOf(b)).to.equal(3);
  });

  it('while Redis is down: configuration reads and metrics answer, actor calls get 503 (never 500), renewals count as lost', async () => {
    // The node with the most actors: its renewals are the ones that fail.
    const owned = await Promise.all(c.nodes.map(async (n) => sampleSum(await scrape(n), 'switchboard_actors_owned')));
    const node = c.nodes[owned.indexOf(Math.max(...owned))]!;
    expect(Math.max(...owned)).to.be.greaterThan(0);
    const failedBefore = sampleSum(await scrape(node), 'switchboard_lease_renew_failures_total');
    await c.redis.kill9();
    try {
      // The next renewal round (TTL 2 s: every ~0.7 s) fails; the scrape still answers.
      const deadline = Date.now() + 5000;
      let failed = 0;
      while (failed === 0 && Date.now() < deadline) {
        failed = sampleSum(await scrape(node), 'switchboard_lease_renew_failures_total') - failedBefore;
        if (failed === 0) await sleep(100);
      }
      expect(failed, `renewal failures on ${node.nodeId}, which owned ${Math.max(...owned)}`).to.be.greaterThan(0);
      const settings = await node.api.get('/api/instance/getSettings/inst-0', { token: c.accountToken });
      expect(settings.status, settings.text).to.equal(200);
      // The dead letters live in the store's outbox: they answer without Redis.
      const dead = await node.api.get('/api/events/deadLetters/inst-0', { token: c.accountToken });
      expect(dead.status, dead.text).to.equal(200);
      // An undecided renewal keeps the actor on its current lease; it stops once that lease lapses (TTL 2 s).
      const stopBy = Date.now() + 5000;
      let call = await c.probe(node, 'inst-1', 'describe');
      while (call.status === 200 && Date.now() < stopBy) {
        await sleep(100);
        call = await c.probe(node, 'inst-1', 'describe');
      }
      expect(call.status, call.text).to.equal(503);
      const health = await node.api.get('/health');
      expect(health.status).to.equal(503);
      expect(health.body.checks).to.include({ redis: 'down', store: 'ok' });
    } finally {
      await c.redis.restart();
    }
    await c.waitAllOwned(15_000);
    expect((await c.probe(node, 'inst-1', 'describe')).status).to.equal(200);
  });
});
