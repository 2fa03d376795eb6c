import { expect } from 'chai';
import { INSTANCE_RECORD_TTL_MS } from '../../src/instances/instance-record-cache.js';
import { TestClient } from '../helpers/ws-harness.js';
import { ClusterFixture, connectAndLink, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';
import { until } from '../helpers/until.js';

/**
 * Spec section 5, "a token can be revoked", across three node processes: a rotation or a disable made on
 * one node holds at once on every other, open WebSockets included. The nodes re-check sockets only every
 * minute here, so a socket closed within a second was closed by the news that crossed Redis.
 */
describe('cluster: tokens revoked on one node hold on every node', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  const clients: TestClient[] = [];

  before(async function () {
    this.timeout(60_000);
    c = await ClusterFixture.start(3, {
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000',
      WS_CONFIG_REFRESH_MS: '60000',
    });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.ws.terminate();
  });
  after(async () => {
    await c?.stop();
  });

  async function socket(node: NodeProcess, name: string, token: string): Promise<TestClient> {
    const client = await TestClient.open(
      `${node.url.replace(/^http/, 'ws')}/ws/${name}?token=${encodeURIComponent(token)}`,
    );
    clients.push(client);
    return client;
  }

  /** The close code if the socket closes within `ms`, else undefined. */
  function closedWithin(client: TestClient, ms: number): Promise<number | undefined> {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));
    return Promise.race([client.closed.then((x) => x.code), timeout]);
  }

  async function statuses(path: string, token: string): Promise<number[]> {
    return Promise.all(c.nodes.map(async (n) => (await n.api.get(path, { token })).status));
  }

  async function accountWithInstance(account: string, name: string, number: string) {
    const created = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: account },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    expect(created.status, created.text).to.equal(201);
    const accountToken = created.body.account.token as string;
    const instance = await c.nodes[1]!.api.post(
      '/api/instance/new',
      { name, websocketEnabled: true },
      { token: accountToken },
    );
    expect(instance.status, instance.text).to.equal(201);
    const token = instance.body.instance.token as string;
    await connectAndLink(c.nodes[1]!.api, c.nodes[2]!.api, name, token, { number });
    const id = instance.body.instance.id as string;
    return { accountToken, token, id };
  }

  it('a TokenInstance rotated on one node: the old one is refused on all three, its sockets on the others close', async () => {
    const { accountToken, token: old } = await accountWithInstance('rot-cluster', 'rot', '5511400000001');
    const [a, b, third] = c.nodes as [NodeProcess, NodeProcess, NodeProcess];
    const onB = await socket(b, 'rot', old);
    const onC = await socket(third, 'rot', old);

    const res = await a.api.post('/api/instance/token/rot', undefined, { token: accountToken });
    expect(res.status, res.text).to.equal(200);
    const token = res.body.instance.token as string;

    const [closedB, closedC] = await Promise.all([closedWithin(onB, 1000), closedWithin(onC, 1000)]);
    expect([closedB, closedC]).to.deep.equal([4001, 4001]);
    expect(await statuses('/api/instance/getSettings/rot', old)).to.deep.equal([401, 401, 401]);
    expect(await statuses('/api/instance/getSettings/rot', token)).to.deep.equal([200, 200, 200]);
    const again = await socket(b, 'rot', token);
    expect(again.ws.readyState).to.equal(again.ws.OPEN);
  });

  it("an instance's record changed on one node is read anew on the others before their copy would lapse", async () => {
    const { accountToken, token } = await accountWithInstance('rec-cluster', 'rec', '5511400000004');
    const [a, b, third] = c.nodes as [NodeProcess, NodeProcess, NodeProcess];
    const messageOn = async (node: NodeProcess) =>
      (await node.api.get('/api/instance/getSettings/rec', { token })).body.settings.callRejectMessage as string;
    // b and the third node read the record now and keep it for INSTANCE_RECORD_TTL_MS (one second).
    for (const node of [b, third]) expect(await messageOn(node)).to.equal('');
    const kept = Date.now();
    const res = await a.api.post('/api/instance/settings/rec', { callRejectMessage: 'changed on a' }, { token });
    expect(res.status, res.text).to.equal(200);
    // Well within the second: the new value comes from the news that crossed Redis, not from a lapse.
    for (const node of [b, third]) await until(async () => (await messageOn(node)) === 'changed on a', 'news', 500);
    expect(Date.now() - kept).to.be.below(INSTANCE_RECORD_TTL_MS);

    const deleted = await a.api.delete('/api/instance/delete/rec', { token: accountToken });
    expect(deleted.status, deleted.text).to.equal(200);
    // The deletion reaches the others' copies as news too: a request can overtake it (the suite under load did).
    const deletedAt = Date.now();
    await until(
      async () => (await statuses('/api/instance/getSettings/rec', token)).every((s) => s === 401),
      'the deletion on every node',
      500,
    );
    expect(Date.now() - deletedAt).to.be.below(INSTANCE_RECORD_TTL_MS);
  });

  it('a TokenAccount rotated by the account on one node: its socket held on another closes', async () => {
    const { accountToken: old, token } = await accountWithInstance('self-cluster', 'self', '5511400000002');
    const [a, , third] = c.nodes as [NodeProcess, NodeProcess, NodeProcess];
    const held = await socket(third, 'self', old);
    const byInstance = await socket(third, 'self', token);

    const res = await a.api.post('/api/account/token', undefined, { token: old });
    expect(res.status, res.text).to.equal(200);
    expect(await closedWithin(held, 1000)).to.equal(4001);
    expect(await closedWithin(byInstance, 200)).to.equal(undefined);
    expect(await statuses('/api/instance/list', old)).to.deep.equal([401, 401, 401]);
    expect(await statuses('/api/instance/list', res.body.account.token as string)).to.deep.equal([200, 200, 200]);
  });

  it('an account disabled on one node: refused on all, its instance stops wherever it ran, and comes back when enabled', async () => {
    const { token, id } = await accountWithInstance('dis-cluster', 'dis', '5511400000003');
    await until(async () => (await c.owners([id]))[0] !== undefined, 'an owner', 10_000);
    const held = await socket(c.nodes[0]!, 'dis', token);

    const res = await c.nodes[2]!.api.post('/api/admin/accounts/dis-cluster/disable', undefined, {
      token: CLUSTER_ADMIN_TOKEN,
    });
    expect(res.status, res.text).to.equal(200);
    expect(await closedWithin(held, 1000)).to.equal(4001);
    expect(await statuses('/api/instance/getSettings/dis', token)).to.deep.equal([401, 401, 401]);
    await until(async () => (await c.owners([id]))[0] === undefined, 'the instance to stop on its owner', 10_000);
    // Stays stopped: no node takes it while the account is disabled.
    await sleep(1500);
    expect((await c.owners([id]))[0]).to.equal(undefined);

    const enabled = await c.nodes[1]!.api.post('/api/admin/accounts/dis-cluster/enable', undefined, {
      token: CLUSTER_ADMIN_TOKEN,
    });
    expect(enabled.status, enabled.text).to.equal(200);
    await until(async () => (await c.owners([id]))[0] !== undefined, 'an owner again', 10_000);
    const sent = await c.nodes[0]!.api.post(
      '/api/message/text/dis',
      { number: '5511400000099', message: 'back' },
      { token },
    );
    expect(sent.status, sent.text).to.equal(200);
  });
});
