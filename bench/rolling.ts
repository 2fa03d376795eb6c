/**
 * Rolling restart of live WhatsApp sessions (a graceful deploy).
 *
 *   npx tsx bench/rolling.ts [--instances 24] [--connect-rate 5] [--interval-ms 200]
 *
 * Three node processes with the Baileys driver (one redis-server, one SQLite file), the WhatsApp
 * simulator and a webhook receiver in this process. N instances are linked by QR, each to a phone of its
 * own, with a webhook for `message.exchange`; another phone writes to them in turn all along. Each node in
 * turn gets SIGTERM, is started again under the same id, and the next waits until every instance is
 * connected again. Read from the simulator (never from the nodes): the longest time any instance was
 * offline, the messages that waited on the server meanwhile (delivered as offline on the next login), the
 * logins refused and the decryption failures; from the receiver: every message delivered, none lost, none
 * twice. See bench/README.md.
 */
import { parseArgs } from 'node:util';
import { ClusterFixture, sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from '../test/cluster/node-process.js';
import { startTestSimulator } from '../test/helpers/simulator.js';
import type { TestSimulator } from '../test/helpers/simulator.js';
import { linkFleet } from '../test/helpers/simulator-fleet.js';
import type { LinkedInstance } from '../test/helpers/simulator-fleet.js';
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { fmt, summary } from './stats.js';

const LEASE_TTL_MS = 2500;
const SENDER = '5511977700000';
const RECONNECT_LIMIT_MS = 120_000;
const QUIET_LIMIT_MS = 60_000;

const { values: args } = parseArgs({
  options: {
    instances: { type: 'string', default: '24' },
    'connect-rate': { type: 'string', default: '5' },
    'interval-ms': { type: 'string', default: '200' },
  },
});
const COUNT = Number(args.instances);
const RATE = Number(args['connect-rate']);
const INTERVAL_MS = Number(args['interval-ms']);
const s = (ms: number) => fmt(ms / 1000, 2);

/**
 * The simulator's view of each instance's device: its live connections (a login adds one, a disconnect
 * ends it; a replacing login may come before the replaced one's end), and its offline spells.
 */
class Presence {
  readonly #live = new Map<string, Set<string>>();
  readonly #offSince = new Map<string, number>();
  readonly spells = new Map<string, number[]>();
  readonly offlineDeliveries = new Set<string>();
  refused = 0;
  decryptFailures = 0;
  #seq = 0;

  constructor(
    private readonly sim: TestSimulator,
    numbers: string[],
  ) {
    for (const n of numbers) this.#live.set(n, new Set(['(linked)']));
  }

  /** Reads from now on; every device counts as connected (the fleet was linked and connected). */
  async start(): Promise<void> {
    this.#seq = (await this.sim.control.log(0)).last;
  }

  async read(): Promise<void> {
    const { last, events } = await this.sim.control.log(this.#seq);
    this.#seq = last;
    for (const e of events) {
      if (e.kind === 'login-refused') this.refused++;
      if (e.kind === 'decrypt-failure') this.decryptFailures++;
      if (e.kind === 'deliver' && e.offline === true && e.tag === 'message') this.offlineDeliveries.add(String(e.id));
      const number = e.device?.split(/[:@]/)[0];
      const live = number === undefined ? undefined : this.#live.get(number);
      if (!live || !number || e.connection === undefined) continue;
      if (e.kind === 'disconnect') {
        // The connection open when the bench began is not known by id: the first disconnect ends it.
        if (!live.delete(e.connection)) live.delete('(linked)');
        if (live.size === 0) this.#offSince.set(number, e.t);
      }
      if (e.kind === 'login') {
        if (live.size === 0) {
          const spells = this.spells.get(number) ?? [];
          spells.push(e.t - this.#offSince.get(number)!);
          this.spells.set(number, spells);
        }
        live.add(e.connection);
      }
    }
  }

  allOnline(): boolean {
    return [...this.#live.values()].every((live) => live.size > 0);
  }
}

async function main(): Promise<void> {
  if (![COUNT, RATE, INTERVAL_MS].every((n) => Number.isFinite(n) && n > 0)) {
    throw new Error('usage: npx tsx bench/rolling.ts [--instances N] [--connect-rate R] [--interval-ms MS]');
  }
  console.log(
    `rolling restart bench: 3 nodes (Baileys), ${COUNT} instances, CONNECT_RATE_PER_SECOND=${RATE} (the simulator's ` +
      `login limit at 3 × that), a message every ${INTERVAL_MS} ms`,
  );
  const [sim, receiver] = await Promise.all([startTestSimulator(), WebhookReceiver.start()]);
  const env = {
    ...sim.nodeEnv,
    ALLOW_PRIVATE_URLS: 'true',
    CONNECT_RATE_PER_SECOND: String(RATE),
    DEFAULT_INSTANCE_QUOTA: String(COUNT + 10),
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    RECONCILE_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
  };
  const fixture = await ClusterFixture.start(3, env);
  let sending = true;
  try {
    const api = fixture.nodes[0]!.api;
    const created = await api.post('/api/admin/accounts', { name: 'rolling' }, { token: CLUSTER_ADMIN_TOKEN });
    const accountToken = created.body.account.token as string;
    const linkedAt = performance.now();
    const fleet: LinkedInstance[] = await linkFleet({ api, accountToken, control: sim.control, count: COUNT });
    for (const i of fleet) {
      const res = await api.post(
        `/api/events/webhook/${i.name}`,
        { url: receiver.url, enabled: true, events: ['message.exchange'] },
        { token: i.token },
      );
      if (res.status !== 201) throw new Error(`webhook of ${i.name}: ${res.status} ${res.text}`);
    }
    await sim.control.ok('POST', '/phones', { number: SENDER, name: 'Customer' });
    await fixture.waitAllOwned(60_000);
    await fixture.waitSettled(60_000);
    console.log(`linked ${COUNT} in ${s(performance.now() - linkedAt)} s`);
    await sim.control.ok('POST', '/limits', { loginsPerSecond: 3 * RATE });

    const presence = new Presence(
      sim,
      fleet.map((i) => i.number),
    );
    await presence.start();
    const sent: string[] = [];
    const traffic = (async () => {
      for (let k = 0; sending; k++) {
        const to = fleet[k % fleet.length]!;
        const res = await sim.control.ok<{ id: string }>('POST', `/phones/${SENDER}/send`, {
          to: to.number,
          text: `r${k}`,
        });
        sent.push(res.id);
        await sleep(INTERVAL_MS);
      }
    })();

    await sleep(3000);
    const steps: { node: string; stopMs: number; backMs: number }[] = [];
    for (const nodeId of fixture.nodes.map((n) => n.nodeId)) {
      const node = fixture.nodes.find((n) => n.nodeId === nodeId)!;
      const t0 = performance.now();
      await node.terminate();
      fixture.remove(node);
      const stopped = performance.now();
      await fixture.addNode({}, nodeId);
      await fixture.waitForMembers(3, 30_000);
      const deadline = performance.now() + RECONNECT_LIMIT_MS;
      for (;;) {
        await presence.read();
        // Settled: every device online again and placement done (the restarted node took its share back).
        if (presence.allOnline() && (await settled(fixture))) break;
        if (performance.now() > deadline) throw new Error(`instances still offline after restarting ${nodeId}`);
        await sleep(250);
      }
      steps.push({ node: nodeId, stopMs: stopped - t0, backMs: performance.now() - stopped });
    }
    await sleep(3000);
    sending = false;
    await traffic;

    const quietUntil = performance.now() + QUIET_LIMIT_MS;
    const received = () =>
      receiver
        .events('message.exchange')
        .filter((r) => r.body?.data?.message?.direction === 'incoming')
        .map((r) => String(r.body.data.id));
    while (performance.now() < quietUntil && new Set(received()).size < new Set(sent).size) await sleep(250);
    await presence.read();

    const got = received();
    const counts = new Map<string, number>();
    for (const id of got) counts.set(id, (counts.get(id) ?? 0) + 1);
    const lost = sent.filter((id) => !counts.has(id)).length;
    const twice = [...counts.values()].filter((n) => n > 1).length;
    const longest = [...presence.spells.values()].map((spells) => Math.max(...spells));
    const offline = summary(longest);
    const waited = sent.filter((id) => presence.offlineDeliveries.has(id)).length;

    console.log('\nstep  node  SIGTERM → exited  restarted → every instance connected and placed');
    for (const [i, st] of steps.entries()) {
      console.log(`${i + 1}     ${st.node}    ${s(st.stopMs)} s            ${s(st.backMs)} s`);
    }
    console.log(
      `\ninstances that went offline: ${presence.spells.size} of ${COUNT}; offline spells ${[...presence.spells.values()].flat().length}`,
    );
    console.log(
      `longest offline per instance: p50 ${s(offline.p50)} s, p99 ${s(offline.p99)} s, max ${s(offline.max)} s ` +
        `(the pacing bound for one node's share: ${s((COUNT / 3 / RATE) * 1000 + LEASE_TTL_MS + 10_000)} s)`,
    );
    console.log(`messages sent during the roll: ${sent.length}; waited on the server for an offline device: ${waited}`);
    console.log(`delivered to the webhook: ${counts.size}; lost ${lost} (goal 0), twice ${twice} (goal 0)`);
    console.log(
      `logins refused by the simulator: ${presence.refused} (goal 0); decryption failures: ${presence.decryptFailures} (goal 0)`,
    );
  } finally {
    sending = false;
    await fixture.stop();
    await Promise.all([sim.close(), receiver.stop()]);
  }
}

/** Whether every instance is owned by its placement node (the fixture's settled wait, without throwing). */
async function settled(fixture: ClusterFixture): Promise<boolean> {
  return fixture.waitSettled(1).then(
    () => true,
    () => false,
  );
}

main().catch((err: unknown) => {
  console.error('rolling bench FAILED:', err);
  process.exitCode = 1;
});
