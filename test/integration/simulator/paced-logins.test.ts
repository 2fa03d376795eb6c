import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../../helpers/test-node.js';
import type { TestNode } from '../../helpers/test-node.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';
import { connectedCount, linkFleet } from '../../helpers/simulator-fleet.js';
import { parseSamples, sampleSum } from '../../helpers/prometheus-text.js';
import { until } from '../../helpers/until.js';

const INSTANCES = 12;
/** The simulator's login limit and the node's pace: equal, so only the pacing keeps refusals at 0. */
const RATE = 4;

describe('paced logins: a node restarting with linked instances, the simulator’s login limit on', function () {
  this.timeout(120_000);
  let sim: TestSimulator;
  let node: TestNode;
  let account: string;
  const env = (rate: number) => ({
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000',
    CONNECT_RATE_PER_SECOND: String(rate),
  });

  /** Restarts the node on its data directory with `rate`, the limit on; answers the logins of the restart. */
  async function restart(
    rate: number,
  ): Promise<{ logins: number; refused: number; simRefused: number; metricRefused: number }> {
    await sim.control.ok('POST', '/limits', { loginsPerSecond: 0 });
    const dataDir = node.dataDir;
    await node.stop({ keepData: true });
    await sim.control.ok('POST', '/limits', { loginsPerSecond: RATE });
    const { last } = await sim.control.log();
    const refusedBefore = (await sim.control.ok<{ loginsRefused: number }>('GET', '/stats')).loginsRefused;
    node = await startTestNode({ ...sim.nodeEnv, ...env(rate) }, dataDir);
    // The records still say connected from before the stop: the simulator's log tells the logins apart.
    const logins = async () => (await sim.control.log(last)).events.filter((e) => e.kind === 'login').length;
    await until(async () => (await logins()) >= INSTANCES, 'a login of every instance', 90_000);
    await until(async () => (await connectedCount(node.api, account)) === INSTANCES, 'all connected again', 30_000);
    const { events } = await sim.control.log(last);
    const stats = await sim.control.ok<{ loginsRefused: number }>('GET', '/stats');
    const metrics = parseSamples((await node.api.get('/metrics', { token: ADMIN_TOKEN })).text);
    return {
      logins: events.filter((e) => e.kind === 'login').length,
      refused: events.filter((e) => e.kind === 'login-refused' && e.reason === 429).length,
      simRefused: stats.loginsRefused - refusedBefore,
      metricRefused: sampleSum(metrics, 'switchboard_whatsapp_logins_refused_total'),
    };
  }

  before(async () => {
    sim = await startTestSimulator();
    node = await startTestNode({ ...sim.nodeEnv, ...env(RATE) });
    account = await node.createAccount('fleet');
    await linkFleet({ api: node.api, accountToken: account, control: sim.control, count: INSTANCES });
  });

  after(async () => {
    await node?.stop();
    await sim?.close();
  });

  it(`connects all ${INSTANCES} again at the simulator’s own rate with 0 logins refused`, async () => {
    const r = await restart(RATE);
    expect(r.logins).to.be.at.least(INSTANCES);
    expect(r.refused).to.equal(0);
    expect(r.simRefused).to.equal(0);
    expect(r.metricRefused).to.equal(0);
  });

  it('unpaced (a rate far above the limit), the same restart is refused, the node backs off, and all connect in the end', async () => {
    const r = await restart(1000);
    expect(r.refused).to.be.above(0);
    expect(r.simRefused).to.equal(r.refused);
    expect(r.metricRefused, 'the node counts what WhatsApp refused').to.equal(r.refused);
    expect(r.logins).to.be.at.least(INSTANCES);
  });
});
