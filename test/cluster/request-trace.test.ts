import { expect } from 'chai';
import { ClusterFixture, connectAndLink, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';

/** One request followed across nodes: the owner's log lines for a routed call carry the front end's request id. */
describe('cluster: a request id crosses to the owner', function () {
  this.timeout(60_000);
  let c: ClusterFixture;

  before(async function () {
    this.timeout(60_000);
    c = await ClusterFixture.start(2, { LOG_LEVEL: 'debug', RATE_LIMIT_PER_MINUTE: '100000' });
  });
  after(async () => {
    await c?.stop();
  });

  const linesOf = (node: NodeProcess) =>
    node.output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => ({ raw: l, line: JSON.parse(l) as Record<string, unknown> }));

  it('logs the routed call on the owner under the id the client sent to the other node, once per line', async () => {
    const account = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'trace' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    const created = await c.nodes[0]!.api.post(
      '/api/instance/new',
      { name: 'traced' },
      { token: account.body.account.token as string },
    );
    const token = created.body.instance.token as string;
    await connectAndLink(c.nodes[0]!.api, c.nodes[1]!.api, 'traced', token, { number: '5511500000001' });
    const id = created.body.instance.id as string;
    let ownerId: string | undefined;
    for (let i = 0; i < 100 && !ownerId; i++) {
      [ownerId] = await c.owners([id]);
      if (!ownerId) await sleep(50);
    }
    const owner = c.nodes.find((n) => n.nodeId === ownerId)!;
    const front = c.other(owner);

    const requestId = `trace-${Date.now()}`;
    const res = await front.api.post(
      '/api/cluster/probe/traced',
      { op: 'describe' },
      { token, headers: { 'x-request-id': requestId } },
    );
    expect(res.status, res.text).to.equal(200);
    await sleep(200);

    const served = linesOf(owner).filter(({ line }) => line.requestId === requestId);
    expect(served.map(({ line }) => line.msg)).to.include('serving a routed call');
    expect(served.every(({ line }) => line.node === owner.nodeId)).to.equal(true);
    const edge = linesOf(front).filter(({ line }) => line.requestId === requestId);
    expect(edge.map(({ line }) => line.msg)).to.include('request');
    for (const { raw } of [...served, ...edge]) expect(raw.split('"requestId"').length - 1, raw).to.equal(1);
  });
});
