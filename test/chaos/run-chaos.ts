import { join } from 'node:path';
import { RECOVER_AFTER_MS } from '../../src/billing/billing-cron.js';
import { dueEvents } from '../../src/billing/billing-plan.js';
import type { BillingTerms, DueEvent } from '../../src/billing/billing-plan.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { FakeTypebot, text, textInput } from '../helpers/fake-typebot.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { connectAndLink } from '../cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from '../cluster/node-process.js';
import { CHAOS_TTL_MS, ChaosCluster } from './chaos-cluster.js';
import {
  checkAvailability,
  checkBilling,
  checkCallRejections,
  checkChatbotReplies,
  checkLostEvents,
  checkLostWrites,
  checkSends,
  checkStaleWrites,
  checkTwoOwners,
} from './checkers.js';
import type { Verdict } from './checkers.js';
import { History } from './history.js';
import { Nemesis } from './nemesis.js';
import { Random } from './random.js';
import { Subscribers, checkWebSockets } from './subscribers.js';
import { Workload, request } from './workload.js';
import type { ChaosInstance } from './workload.js';

export interface ChaosOptions {
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

async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined || Date.now() > end) return v;
    await sleep(100);
  }
}

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

async function setUpBot(cluster: ChaosCluster, typebot: FakeTypebot): Promise<ChaosInstance> {
  const api = cluster.running[0]!.process!.api;
  const account = await api.post('/api/admin/accounts', { name: 'chaos-bots' }, { token: CLUSTER_ADMIN_TOKEN });
  const accountToken = account.body.account.token as string;
  const created = await api.post('/api/instance/new', { name: BOT_INSTANCE }, { token: accountToken });
  if (created.status !== 201) throw new Error(`create ${BOT_INSTANCE}: ${created.text}`);
  const token = created.body.instance.token as string;
  const number = '5598000019999';
  await connectAndLink(api, api, BOT_INSTANCE, token, { number });
  const url = typebot.flow('chaos-echo', [
    { messages: [], input: textInput() },
    ...Array.from({ length: 10_000 }, () => ({
      messages: ({ answers }: { answers: string[] }) => [text(`echo ${answers.at(-1)}`)],
      input: textInput(),
    })),
  ]);
  const bot = await api.post(`/api/chatbot/set/${BOT_INSTANCE}`, { url, triggerType: 'all' }, { token });
  if (bot.status !== 201) throw new Error(`bot: ${bot.text}`);
  return { name: BOT_INSTANCE, id: created.body.instance.id as string, token, number };
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

/** Creates an account and linked instances whose webhooks go to the receiver. */
async function setUp(cluster: ChaosCluster, receiver: WebhookReceiver, count: number): Promise<ChaosInstance[]> {
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
    const token = created.body.instance.token as string;
    const via = cluster.running[i % cluster.running.length]!.process!.api;
    await connectAndLink(via, via, name, token, { number });
    instances.push({ name, id: created.body.instance.id as string, token, number });
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
  const cluster = await ChaosCluster.start(o.nodes, {
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CREATE_PER_MINUTE: '1000',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_RETRY_MAX_MS: '1000',
    WEBHOOK_MAX_ATTEMPTS: '100',
    CALL_TIMEOUT_MS: '5000',
    BILLING_CRON: '* * * * * *',
    BILLING_TRIAL: '6s',
    BILLING_TRIAL_NOTICE: '3s',
    BILLING_CYCLE: '10s',
    BILLING_BASE_CENTS: String(BILLING_TERMS.baseCents),
    BILLING_INSTANCE_MONTHLY_CENTS: String(BILLING_TERMS.instanceMonthlyCents),
  });
  try {
    const instances = await setUp(cluster, receiver, o.instances);
    await setUpBilling(cluster, receiver);
    const botInstance = await setUpBot(cluster, typebot);
    o.log(`chaos: ${cluster.running.length} nodes, ${instances.length} instances, seed ${o.seed}`);
    const nemesis = new Nemesis(cluster, random, history, { minNodes: Math.min(3, o.nodes), maxNodes: 5 });
    const workload = new Workload(cluster, instances, random, history, botInstance);
    const clients = workload.run(o.workers, 'client');
    const subscribers = new Subscribers(cluster, random);
    subscribers.start(instances);
    const end = Date.now() + o.durationMs;
    while (Date.now() < end) {
      await nemesis.strike();
      const last = history.operations.filter((op) => op.process === 'nemesis').at(-1);
      o.log(`chaos: fault ${nemesis.faults}: ${last?.kind} on ${String(last?.fields.node)} (${last?.outcome})`);
      await sleep(o.faultIntervalMs);
    }
    const healedAt = Date.now();
    // Every node the nemesis left down comes back; the run ends quiet.
    for (const node of cluster.nodes) if (!node.process) await cluster.startNode(node);
    workload.stop();
    // The clients wind down while availability is checked: a client op still retrying past the last fault
    // (up to its own timeouts) says nothing about how soon the instances answer again.
    const windingDown = Promise.all([clients, subscribers.stop()]);
    // A failure surfaces at the await below; until then it must not count as unhandled.
    windingDown.catch(() => undefined);

    // 7. Availability: every instance owned by a live node and answering a call.
    const limitMs = CHAOS_TTL_MS + 2000;
    const front = () => random.pick(cluster.running).process!.url;
    const live = () => new Set(cluster.running.map((n) => n.id));
    const unavailable = new Set(instances.map((i) => i.name));
    await until(async () => {
      const owners = await cluster.owners(instances.map((i) => i.id)).catch(() => []);
      for (const [k, instance] of instances.entries()) {
        if (!unavailable.has(instance.name) || !owners[k] || !live().has(owners[k])) continue;
        const res = await request(front(), 'GET', `/api/instance/getSettings/${instance.name}`, instance.token);
        const probe = await request(front(), 'POST', `/api/cluster/probe/${instance.name}`, instance.token, {
          op: 'describe',
        });
        if (res?.status === 200 && probe?.status === 200) unavailable.delete(instance.name);
      }
      return unavailable.size === 0 ? true : undefined;
    }, limitMs + 20_000);
    const tookMs = Date.now() - healedAt;
    await windingDown;
    await sleep(o.quietMs);

    // What the network and the receiver saw, and the final settings.
    const network = new Map<string, string[]>();
    const rejections = new Map<string, string[]>();
    const finalValues = new Map<string, string | undefined>();
    for (const instance of instances) {
      const outbox = await request(front(), 'GET', `/api/sandbox/outbox/${instance.name}`, instance.token);
      rejections.set(
        instance.name,
        ((outbox?.body?.messages ?? []) as { type: string; call?: { callId: string } }[])
          .filter((m) => m.type === 'call_reject')
          .map((m) => m.call?.callId ?? ''),
      );
      network.set(
        instance.name,
        ((outbox?.body?.messages ?? []) as { type: string; text?: string; media?: { caption?: string } }[])
          .filter((m) => m.type === 'text' || m.type === 'media')
          .map((m) => (m.type === 'media' ? (m.media?.caption ?? '') : (m.text ?? ''))),
      );
      const settings = await request(front(), 'GET', `/api/instance/getSettings/${instance.name}`, instance.token);
      finalValues.set(instance.name, settings?.body?.settings?.callRejectMessage ?? undefined);
    }
    const botOutbox = await request(front(), 'GET', `/api/sandbox/outbox/${BOT_INSTANCE}`, botInstance.token);
    const botReplies = ((botOutbox?.body?.messages ?? []) as { type: string; text?: string }[])
      .filter((m) => m.type === 'text')
      .map((m) => m.text ?? '');
    const received = new Map<string, Set<string>>();
    for (const r of receiver.events('message.exchange')) {
      const name = r.body.instanceData.instance as string;
      const set = received.get(name) ?? new Set<string>();
      set.add(r.body.data.message.content as string);
      received.set(name, set);
    }

    const due = await dueBy(cluster, healedAt);
    o.log(`chaos: billing events due by the last fault: ${due.length}`);
    // An entry recorded by a holder that died before queuing it is re-sent by the next holder only after the
    // cron's recovery window: the checker waits that long for what is still missing, never longer.
    const billingWaitStart = Date.now();
    await until(async () => {
      const missing = checkBilling(due, receiver.received)[1]!;
      return missing.anomalies === 0 ? true : undefined;
    }, RECOVER_AFTER_MS + 5000);
    const billingWaitMs = Date.now() - billingWaitStart;
    if (billingWaitMs > 200) o.log(`chaos: waited ${billingWaitMs} ms for billing events in recovery`);
    const socketEvents = subscribers.connections.reduce((n, c) => n + c.events.length, 0);
    const rejectionCount = [...rejections.values()].reduce((n, ids) => n + ids.length, 0);
    const acknowledgedCalls = history.of('call').filter((op) => op.outcome === 'ok').length;
    o.log(`chaos: calls acknowledged ${acknowledgedCalls}, rejections at the network ${rejectionCount}`);
    o.log(`chaos: chatbot questions ${history.of('chat').length}, answers ${botReplies.length}`);
    o.log(`chaos: websocket connections ${subscribers.connections.length}, events received ${socketEvents}`);
    const verdicts = [
      checkStaleWrites(cluster.probeFile),
      ...checkSends(history, network),
      checkLostEvents(history, received),
      checkLostWrites(history, finalValues),
      checkTwoOwners(cluster.probeFile),
      checkWebSockets(subscribers.connections),
      checkChatbotReplies(history, botReplies),
      ...checkCallRejections(history, rejections),
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
        `chaos: replay with: npm run chaos -- --seed ${o.seed} --duration ${o.durationMs / 1000}s --nodes ${o.nodes}` +
          ` --fault-interval ${o.faultIntervalMs / 1000}s --instances ${o.instances} --workers ${o.workers}`,
      );
    }
    return { faults: nemesis.faults, operations: clientOps.length, anomalies, verdicts, seed: o.seed, summary };
  } finally {
    await cluster.stop();
    await receiver.stop();
    await typebot.close();
  }
}
