import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { expectOk } from './support.js';

describe('POST /api/cluster/probe-heap (tests only)', function () {
  this.timeout(20_000);
  let probed: TestNode;
  let plain: TestNode;
  let probeDir: string;

  before(async () => {
    probeDir = mkdtempSync(join(tmpdir(), 'switchboard-probe-'));
    probed = await startTestNode({ TEST_PROBE_FILE: join(probeDir, 'probe.jsonl') });
    plain = await startTestNode();
  });

  after(async () => {
    await probed?.stop();
    await plain?.stop();
    if (probeDir) rmSync(probeDir, { recursive: true, force: true });
  });

  it('collects garbage and reports the memory in use, for the global token only', async () => {
    const res = await probed.api.post('/api/cluster/probe-heap', undefined, { token: ADMIN_TOKEN });
    expectOk(res);
    expect(res.body.heapUsed).to.be.a('number').above(0);
    expect(res.body.rss).to.be.at.least(res.body.heapUsed);
    expect(res.body.external).to.be.a('number');
    expect(res.body.actors).to.equal(0);
    expect(res.body.gcPauseMs).to.be.a('number').above(0);
    const account = await probed.createAccount('not-global');
    expect((await probed.api.post('/api/cluster/probe-heap', undefined, { token: account })).status).to.equal(403);
  });

  it('does not exist without TEST_PROBE_FILE', async () => {
    expect((await plain.api.post('/api/cluster/probe-heap', undefined, { token: ADMIN_TOKEN })).status).to.equal(404);
  });
});
