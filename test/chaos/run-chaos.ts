import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RECOVER_AFTER_MS } from '../../src/billing/billing-cron.js';
import { dueEvents } from '../../src/billing/billing-plan.js';
import type { BillingTerms, DueEvent } from '../../src/billing/billing-plan.js';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeTypebot, text, textInput } from '../helpers/fake-typebot.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { CLUSTER_ADMIN_TOKEN } from '../cluster/node-process.js';
import { CHAOS_TTL_MS, ChaosCluster } from './chaos-cluster.js';
import type { ChaosNetwork } from './chaos-network.js';
import { startChaosBrokers } from './chaos-brokers.js';
import type { BrokerRecord, ChaosBroker } from './chaos-brokers.js';
import type { ChaosRedisMode } from './chaos-redis.js';
import {
  checkAvailability,
  checkBilling,
  checkCallRejections,
  checkChatbotReplies,
  checkChatbotUnanswered,
  checkConfigChanges,
  checkDecryptFailures,
  checkLostEvents,
  checkLostWrites,
  checkSends,
  checkStaleSideEffects,
  checkStaleWrites,
  checkStreamDuplicates,
  checkTwoOwners,
} from './checkers.js';
import { EpochWatch } from './epoch-watch.js';
import { SandboxNetwork } from './sandbox-network.js';
import { SimulatorNetwork } from './simulator-network.js';
import type { ConfigDelivery, Verdict } from './checkers.js';
import { History } from './history.js';
import { CHAOS_BUSY_TIMEOUT_MS, Nemesis } from './nemesis.js';
import { Random } from './random.js';
import { Subscribers, checkWebSockets } from './subscribers.js';
import { Workload, request } from './workload.js';
import type { ChaosInstance } from './workload.js';
import { until } from '../helpers/until.js';

/** The longest Baileys' keep-alive takes to end a connection that went silent (2 × 30 s + 5 s). */
const KEEP_ALIVE_VERDICT_MS = 65_000;

export interface ChaosOptions {
  /** The nodes' driver: Baileys through the WhatsApp simulator, or the sandbox network. @default baileys */
  driver: 'baileys' | 'sandbox';
  durationMs: number;
  seed: number;
  nodes: number;
  /** Pause between two faults (each fault also takes its own time to heal). @default 3000 */
  faultIntervalMs: number;
  instances: number;
  /** Client workers. @default 3 */
  workers: number;
  /** Quiet time after the last fault before the final checks. @default 6000 */
  quietMs: number;
  log: (line: string) => void;
  /** The Redis the nodes share: one server, a Redis Cluster, or a master behind sentinels. @default single */
  redis?: ChaosRedisMode;
  /** A directory where each node process's output and the network's record are written at the end. */
  keepLogs?: string;
}

export interface ChaosReport {
  faults: number;
  operations: number;
  anomalies: number;
  verdicts: Verdict[];
  seed: number;
  summary: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The billing cron runs every second on short terms, so that trials end and periods renew during a run. */
const BILLING_TERMS: BillingTerms = {
  trial: { months: 0, ms: 6000 },
  trialNotice: { months: 0, ms: 3000 },
  cycle: { months: 0, ms: 10_000 },
  baseCents: 1000,
  instanceMonthlyCents: 3000,
};
const BILLING_ACCOUNT = 'chaos-billing';

/** An account whose webhook goes to the receiver, with two instances (unlinked: billing needs no session). */
async function setUpBilling(cluster: ChaosCluster, receiver: WebhookReceiver): Promise<void> {
  const api = cluster.running[0]!.process!.api;
  const account = await api.post('/api/admin/accounts', { name: BILLING_ACCOUNT }, { token: CLUSTER_ADMIN_TOKEN });
  const token = account.body.account.token as string;
  const hooked = await api.request('PATCH', '/api/account/webhook', { url: receiver.url }, { token });
  if (hooked.status !== 200) throw new Error(`account webhook: ${hooked.text}`);
  for (const name of ['billed-1', 'billed-2']) {
    const created = await api.post('/api/instance/new', { name }, { token });
    if (created.status !== 201) throw new Error(`create ${name}: ${created.text}`);
  }
}

/** The chatbot's instance: an echo flow on the fake Typebot answers each contact's message once. */
const BOT_INSTANCE = 'chaos-bot';

async function setUpBot(cluster: ChaosCluster, network: ChaosNetwork, typebot: FakeTypebot): Promise<ChaosInstance> {
  const api = cluster.running[0]!.process!.api;
  const account = await api.post('/api/admin/accounts', { name: 'chaos-bots' }, { token: CLUSTER_ADMIN_TOKEN });
  const accountToken = account.body.account.token as string;
  const created = await api.post('/api/instance/new', { name: BOT_INSTANCE }, { token: accountToken });
  if (created.status !== 201) throw new Error(`create ${BOT_INSTANCE}: ${created.text}`);
  const token = created.body.instance.token as string;
  const bot: ChaosInstance = {
    name: BOT_INSTANCE,
    id: created.body.instance.id as string,
    token,
    number: '5598000019999',
  };
  await network.prepare(bot);
  await network.link(api, bot);
  const url = typebot.flow('chaos-echo', [
    { messages: [], input: textInput() },
    ...Array.from({ length: 10_000 }, () => ({
      messages: ({ answers }: { answers: string[] }) => [text(`echo ${answers.at(-1)}`)],
      input: textInput(),
    })),
  ]);
  // Set-up is not under test: a busy machine may time the routed call out, and setting it again is harmless.
  for (let attempt = 1; ; attempt++) {
    const set = await api.post(`/api/chatbot/set/${BOT_INSTANCE}`, { url, triggerType: 'all' }, { token });
    if (set.status === 201 || set.status === 200) break;
    if (set.status < 500 || attempt === 5) throw new Error(`bot: ${set.status} ${set.text}`);
    await sleep(500 * attempt);
  }
  return bot;
}

/** What the billing cron had to emit by `cutoff`, from the store the nodes share. */
async function dueBy(cluster: ChaosCluster, cutoff: number): Promise<DueEvent[]> {
  const store = new SqliteStore(join(cluster.dir, 'switchboard.db'));
  try {
    const account = await store.accounts.findByName(BILLING_ACCOUNT);
    if (!account) return [];
    const instances = await store.instances.listByAccount(account.id);
    // dueEvents lists the last few ended periods only (its catch-up bound): asked once a period, every one.
    const due = new Map<string, DueEvent>();
    for (let t = Date.parse(account.createdAt); ; t = Math.min(t + BILLING_TERMS.cycle.ms, cutoff)) {
      for (const e of dueEvents(account, instances, t, BILLING_TERMS)) due.set(e.key, e);
      if (t === cutoff) break;
    }
    return [...due.values()];
  } finally {
    await store.close();
  }
}

/** A delivery taken by a node that died is taken again after this (above WEBHOOK_TIMEOUT_MS). */
const CHAOS_WEBHOOK_LEASE_MS = 3000;

/** Where each instance's `cfg` webhook points before the workload changes it. */
const INITIAL_CFG_PATH = '/cfg-0';

/** Creates an account and linked instances whose webhooks go to the receiver. */
async function setUp(
  cluster: ChaosCluster,
  network: ChaosNetwork,
  receiver: WebhookReceiver,
  count: number,
  brokers: ChaosBroker[],
): Promise<ChaosInstance[]> {
  const front = cluster.running[0]!.process!;
  const account = await front.api.post('/api/admin/accounts', { name: 'chaos' }, { token: CLUSTER_ADMIN_TOKEN });
  const accountToken = account.body.account.token as string;
  const instances: ChaosInstance[] = [];
  for (let i = 0; i < count; i++) {
    const name = `chaos-${i}`;
    const number = `55980000${String(1000 + i)}`;
    const created = await front.api.post(
      '/api/instance/new',
      {
        name,
        webhookEnabled: true,
        webhookURL: receiver.url,
        webhookEvents: ['message.exchange'],
        websocketEnabled: true,
        websocketEvents: ['message.exchange'],
        // Contacts' calls are rejected: a rejection is a side effect that must happen once.
        settings: { autoRejectCalls: true },
      },
      { token: accountToken },
    );
    if (created.status !== 201) throw new Error(`create ${name}: ${created.text}`);
    // The second webhook, which the workload re-points, filters and deletes while events flow (checker 6).
    const cfg = await front.api.post(
      `/api/events/webhook/${name}`,
      { label: 'cfg', enabled: true, url: `${receiver.url}${INITIAL_CFG_PATH}`, events: ['message.exchange'] },
      { token: created.body.instance.token as string },
    );
    if (cfg.status !== 201) throw new Error(`cfg webhook of ${name}: ${cfg.text}`);
    // The brokers consume the same events: the lost-inbound checker reads them too.
    for (const broker of brokers) await broker.enable(front.api, name, created.body.instance.token as string);
    const instance: ChaosInstance = {
      name,
      id: created.body.instance.id as string,
      token: created.body.instance.token,
      number,
    };
    await network.prepare(instance);
    await network.link(cluster.running[i % cluster.running.length]!.process!.api, instance);
    instances.push(instance);
  }
  return instances;
}

/**
 * One run: faults from the nemesis while clients work, then every fault healed, a quiet period, and the
 * checkers over the whole history.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const random = new Random(o.seed);
  const history = new History();
  const receiver = await WebhookReceiver.start();
  const typebot = await FakeTypebot.start();
  const network: ChaosNetwork = o.driver === 'baileys' ? await SimulatorNetwork.start() : new SandboxNetwork();
  const { brokers, missing: brokersMissing } = await startChaosBrokers();
  const cluster = await ChaosCluster.start(
    o.nodes,
    {
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_LEASE_MS: String(CHAOS_WEBHOOK_LEASE_MS),
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_MAX_ATTEMPTS: '100',
      CALL_TIMEOUT_MS: '5000',
      SQLITE_BUSY_TIMEOUT_MS: String(CHAOS_BUSY_TIMEOUT_MS),
      BILLING_CRON: '* * * * * *',
      BILLING_TRIAL: '6s',
      BILLING_TRIAL_NOTICE: '3s',
      BILLING_CYCLE: '10s',
      BILLING_BASE_CENTS: String(BILLING_TERMS.baseCents),
      BILLING_INSTANCE_MONTHLY_CENTS: String(BILLING_TERMS.instanceMonthlyCents),
      ...Object.assign({}, ...brokers.map((b) => b.env)),
    },
    (nodeId) => network.nodeEnv(nodeId),
    o.redis ?? 'single',
  );
  const epochs = network instanceof SimulatorNetwork ? new EpochWatch(join(cluster.dir, 'switchboard.db')) : undefined;
  if (network instanceof SimulatorNetwork) network.epochs = epochs;
  try {
    const instances = await setUp(cluster, network, receiver, o.instances, brokers);
    await setUpBilling(cluster, receiver);
    const botInstance = await setUpBot(cluster, network, typebot);
    o.log(
      `chaos: ${cluster.running.length} nodes (${o.driver}, Redis ${cluster.redis.mode}), ${instances.length} instances, seed ${o.seed}`,
    );
    for (const broker of brokers) o.log(`chaos: events also to a ${broker.name}`);
    for (const why of brokersMissing) o.log(`chaos: a broker left out: ${why}`);
    const nemesis = new Nemesis(cluster, network, random, history, instances, {
      minNodes: Math.min(3, o.nodes),
      maxNodes: 5,
      faults: brokers.flatMap((b) => b.faults),
    });
    const workload = new Workload(cluster, network, instances, random, history, botInstance);
    workload.receiverUrl = receiver.url;
    const clients = workload.run(o.workers, 'client');
    const subscribers = new Subscribers(cluster, random);
    subscribers.start(instances);
    const end = Date.now() + o.durationMs;
    let lastLostAt = Number.NEGATIVE_INFINITY;
    while (Date.now() < end) {
      await nemesis.strike();
      const last = history.operations.filter((op) => op.process === 'nemesis').at(-1);
      if (last?.kind === 'wa-lost') lastLostAt = Date.now();
      // A fault that could not be injected is not counted; its cause is shown.
      const outcome = last?.outcome === 'fail' ? `fail: ${last.detail ?? 'no cause given'}` : last?.outcome;
      o.log(`chaos: fault ${nemesis.faults}: ${last?.kind} on ${String(last?.fields.node)} (${outcome})`);
      await sleep(o.faultIntervalMs);
    }
    const healedAt = Date.now();
    // Every node the nemesis left down comes back; the run ends quiet.
    for (const node of cluster.nodes) if (!node.process) await cluster.startNode(node);
    await nemesis.healNetwork();
    workload.stop();
    // The clients wind down while availability is checked: a client op still retrying past the last fault
    // (up to its own timeouts) says nothing about how soon the instances answer again.
    const windingDown = Promise.all([clients, subscribers.stop()]);
    // A failure surfaces at the await below; until then it must not count as unhandled.
    windingDown.catch(() => undefined);

    // 7. Availability: every instance owned by a live node and answering a call (on WhatsApp, connected
    // again too: within the TTL plus a reconnect's backoff).
    // A connection blackholed by `wa-lost` (nothing read, nothing sent, never closed) is found by a send's
    // missing ack or, on a quiet instance, only by Baileys' keep-alive: up to two 30 s intervals and 5 s.
    const keepAliveVerdictMs = lastLostAt + KEEP_ALIVE_VERDICT_MS - healedAt;
    const limitMs = Math.max(CHAOS_TTL_MS + 2000 + (o.driver === 'baileys' ? 10_000 : 0), keepAliveVerdictMs);
    const front = () => random.pick(cluster.running).process!.url;
    const live = () => new Set(cluster.running.map((n) => n.id));
    const unavailable = new Set(instances.map((i) => i.name));
    await until(
      async () => {
        const owners = await cluster.owners(instances.map((i) => i.id)).catch(() => []);
        for (const [k, instance] of instances.entries()) {
          if (!unavailable.has(instance.name) || !owners[k] || !live().has(owners[k])) continue;
          const res = await request(front(), 'GET', `/api/instance/getSettings/${instance.name}`, instance.token);
          const probe = await request(front(), 'POST', `/api/cluster/probe/${instance.name}`, instance.token, {
            op: 'describe',
          });
          const connected =
            network instanceof SimulatorNetwork
              ? await network.available(instance, random.pick(cluster.running).process!.api)
              : true;
          if (res?.status === 200 && probe?.status === 200 && connected) unavailable.delete(instance.name);
        }
        return unavailable.size === 0 ? true : undefined;
      },
      'every instance available again',
      limitMs + 20_000,
      100,
    ).catch(() => undefined);
    const tookMs = Date.now() - healedAt;
    await windingDown;
    await sleep(o.quietMs);

    // What the network and the receiver saw, and the final settings.
    let observed = await network.observe(instances, botInstance, history, cluster);
    // A question handed over at the last moment, or just before the bot's owner failed over, is answered by the
    // next owner once it holds the instance and is connected again: wait as long as availability may take.
    const answersWaitStart = Date.now();
    while (
      checkChatbotUnanswered(history, observed.questions, observed.botReplies).anomalies > 0 &&
      Date.now() - answersWaitStart < limitMs
    ) {
      await sleep(250);
      observed = await network.observe(instances, botInstance, history, cluster);
    }
    const answersWaitMs = Date.now() - answersWaitStart;
    if (answersWaitMs > 200) o.log(`chaos: waited ${answersWaitMs} ms for chatbot answers still owed`);
    for (const note of observed.notes) o.log(`chaos: ${note}`);
    const finalValues = new Map<string, string | undefined>();
    for (const instance of instances) {
      const settings = await request(front(), 'GET', `/api/instance/getSettings/${instance.name}`, instance.token);
      finalValues.set(instance.name, settings?.body?.settings?.callRejectMessage ?? undefined);
    }
    // The default webhook (path `/`) never changes: what it got is what was emitted.
    const receivedNow = () => {
      const received = new Map<string, Set<string>>();
      const viaCfg: ConfigDelivery[] = [];
      for (const r of receiver.events('message.exchange')) {
        const name = r.body.instanceData.instance as string;
        const text = r.body.data.message.content.text as string;
        if (r.path.startsWith('/cfg-')) {
          viaCfg.push({ instance: name, text, path: r.path });
          continue;
        }
        received.set(name, (received.get(name) ?? new Set<string>()).add(text));
      }
      return { received, viaCfg };
    };
    // Deliveries a killed node held are taken again once their lease ends: wait that long for what is missing.
    const inboundWaitStart = Date.now();
    const held = new Map<ChaosBroker, BrokerRecord>();
    await until(
      async () => {
        if (checkLostEvents(history, observed.delivered, receivedNow().received).anomalies > 0) return undefined;
        for (const broker of brokers) {
          const record = await broker.read();
          held.set(broker, record);
          if (checkLostEvents(history, observed.delivered, record.received).anomalies > 0) return undefined;
        }
        return true;
      },
      'the inbound events still missing',
      CHAOS_WEBHOOK_LEASE_MS + 5000,
      250,
    ).catch(() => undefined);
    const inboundWaitMs = Date.now() - inboundWaitStart;
    if (inboundWaitMs > 200) o.log(`chaos: waited ${inboundWaitMs} ms for inbound events held by a dead node`);
    const { received, viaCfg } = receivedNow();

    const due = await dueBy(cluster, healedAt);
    o.log(`chaos: billing events due by the last fault: ${due.length}`);
    // An entry recorded by a holder that died before queuing it is re-sent by the next holder only after the
    // cron's recovery window: the checker waits that long for what is still missing, never longer.
    const billingWaitStart = Date.now();
    await until(
      async () => {
        const missing = checkBilling(due, receiver.received)[1]!;
        return missing.anomalies === 0 ? true : undefined;
      },
      'the billing events still missing',
      RECOVER_AFTER_MS + 5000,
      100,
    ).catch(() => undefined);
    const billingWaitMs = Date.now() - billingWaitStart;
    if (billingWaitMs > 200) o.log(`chaos: waited ${billingWaitMs} ms for billing events in recovery`);
    const socketEvents = subscribers.connections.reduce((n, c) => n + c.events.length, 0);
    const rejectionCount = [...observed.rejections.values()].reduce((n, ids) => n + ids.length, 0);
    const acknowledgedCalls = [...observed.acknowledgedCalls.values()].reduce((n, ids) => n + ids.size, 0);
    const handedOver = [...observed.delivered.values()].reduce((n, texts) => n + texts.size, 0);
    o.log(`chaos: inbound sent ${history.of('inbound').length}, handed over to the instances ${handedOver}`);
    for (const broker of brokers) {
      const record = await broker.read();
      held.set(broker, record);
      o.log(`chaos: message.exchange events in the ${broker.name} ${record.stored}`);
    }
    o.log(`chaos: calls acknowledged ${acknowledgedCalls}, rejections at the network ${rejectionCount}`);
    o.log(
      `chaos: chatbot questions ${history.of('chat').length}, handed over ${observed.questions.size}, answers ${observed.botReplies.length}`,
    );
    o.log(`chaos: websocket connections ${subscribers.connections.length}, events received ${socketEvents}`);
    const verdicts = [
      checkStaleWrites(cluster.probeFile),
      ...checkSends(history, observed.sent),
      checkLostEvents(history, observed.delivered, received),
      ...[...held].flatMap(([broker, record]) => [
        checkLostEvents(history, observed.delivered, record.received, broker.name),
        checkStreamDuplicates(record.copies, broker.name),
      ]),
      checkConfigChanges(history, viaCfg, received, INITIAL_CFG_PATH),
      checkLostWrites(history, finalValues),
      checkTwoOwners(cluster.probeFile),
      checkWebSockets(subscribers.connections),
      checkChatbotReplies(history, observed.botReplies),
      checkChatbotUnanswered(history, observed.questions, observed.botReplies),
      ...checkCallRejections(observed.acknowledgedCalls, observed.rejections, observed.callTimelines),
      ...(o.driver === 'baileys'
        ? [
            checkDecryptFailures(
              observed.decryptFailures,
              observed.companionRetries,
              new Set(receiver.events('message.exchange').map((r) => r.body.data.id as string)),
            ),
            checkStaleSideEffects(observed.staleSideEffects),
          ]
        : []),
      // Due by the time the last fault healed: the quiet period and the recovery wait leave time to deliver them.
      ...checkBilling(due, receiver.received),
      checkAvailability([...unavailable], tookMs, limitMs),
    ];
    const clientOps = history.operations.filter((op) => op.process !== 'nemesis');
    const anomalies = verdicts.reduce((n, v) => n + v.anomalies, 0);
    for (const v of verdicts) {
      o.log(`chaos: ${v.checker}: ${v.anomalies}`);
      for (const line of v.examples) o.log(`chaos:   ${line}`);
    }
    const byOutcome = ['ok', 'fail', 'info'].map((k) => `${clientOps.filter((op) => op.outcome === k).length} ${k}`);
    o.log(`chaos: operations ${byOutcome.join(', ')}; availability after the last fault: ${tookMs} ms`);
    const summary = `chaos: ${nemesis.faults} faults, ${clientOps.length} operations, ${anomalies} anomalies (seed ${o.seed})`;
    if (anomalies > 0) {
      o.log(
        `chaos: replay with: npm run chaos -- --driver ${o.driver} --seed ${o.seed} --duration ${o.durationMs / 1000}s --nodes ${o.nodes}` +
          ` --fault-interval ${o.faultIntervalMs / 1000}s --instances ${o.instances} --workers ${o.workers}` +
          (o.redis && o.redis !== 'single' ? ` --redis ${o.redis}` : ''),
      );
    }
    if (o.keepLogs) keepLogs(o.keepLogs, cluster, network, receiver, o.log);
    return { faults: nemesis.faults, operations: clientOps.length, anomalies, verdicts, seed: o.seed, summary };
  } finally {
    epochs?.close();
    await cluster.stop();
    await network.close();
    await receiver.stop();
    await typebot.close();
    for (const broker of brokers) await broker.close();
  }
}

/** Writes what a run leaves to read an anomaly by: every node process's output and the network's record. */
function keepLogs(
  dir: string,
  cluster: ChaosCluster,
  network: ChaosNetwork,
  receiver: WebhookReceiver,
  log: (line: string) => void,
): void {
  mkdirSync(dir, { recursive: true });
  // The store as the run left it (the history's emitted marks, the outbox, the owners), and what the receiver got.
  for (const suffix of ['', '-wal', '-shm']) {
    const file = join(cluster.dir, SQLITE_FILE_NAME + suffix);
    if (existsSync(file)) copyFileSync(file, join(dir, SQLITE_FILE_NAME + suffix));
  }
  writeFileSync(
    join(dir, 'webhooks.jsonl'),
    receiver.received.map((r) => JSON.stringify({ at: r.at, path: r.path, body: r.body })).join('\n'),
  );
  for (const { node, process } of cluster.started) {
    writeFileSync(join(dir, `${node}-${process.pid}.log`), process.output);
  }
  const record = network.record?.();
  if (record !== undefined) writeFileSync(join(dir, 'network.jsonl'), record);
  log(`chaos: logs kept in ${dir}`);
}
