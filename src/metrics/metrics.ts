import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric of a node: this module alone imports prom-client and names metrics. Components
 * receive one of the small interfaces below (optional, so that tests can build them without metrics) and
 * report plain numbers; gauges are read at scrape time from callbacks. Each node has its own registry
 * (tests run several nodes in one process); the process-wide metrics (memory, CPU, event loop, GC) are
 * collected once per process and appended to every node's scrape.
 */

/** Where a routed call ran: this node's actor, or another node's over Redis. */
export type CallTarget = 'local' | 'remote';
export type DeliveryOutcome = 'delivered' | 'retried' | 'buried';
/** The rate-limit bucket that refused a request: all requests, or instance creation. */
export type RateLimitBucket = 'requests' | 'create';

/** What an ActorHost reports. */
export interface ActorMetrics {
  activated(): void;
  stopped(reason: string): void;
  /** One renewal round of all this node's leases: its duration and how many leases it lost. */
  leaseRenewal(seconds: number, lost: number): void;
  /** A renewal round that failed as a whole (Redis unreachable). */
  leaseRenewalFailed(): void;
}

/** What the Router reports: one entry per call, its outcome `ok` or the error code. */
export interface CallMetrics {
  routedCall(target: CallTarget, outcome: string, seconds: number): void;
}

/** What the DeliveryWorker reports: one entry per POST attempt. */
export interface DeliveryMetrics {
  deliveryAttempt(outcome: DeliveryOutcome, seconds: number): void;
}

/** What the rate-limit middleware reports. */
export interface RateLimitMetrics {
  rateLimited(bucket: RateLimitBucket): void;
}

/** Values read at every scrape. */
export interface NodeGauges {
  actorsOwned(): number;
  /** Calls queued or running in this node's actors: the sum, and the longest single mailbox. */
  mailboxes(): { total: number; max: number };
  /** Deliveries waiting (cluster mode: the shared queue, so every node reports the same figure). */
  webhookQueueDepth(): Promise<number>;
  /** Whether each event broker this node publishes to takes events now (false: they wait in the queue). */
  brokersUp(): Readonly<Record<string, boolean>>;
  /** Instance sockets (`/ws/:instance`) and operator console streams (`/console/stream`). */
  websocketClients(): { instance: number; console: number };
  /** What happened to received media on this node (counts that only grow; see media/media-counters.ts). */
  receivedMedia(): Readonly<Record<string, number>>;
  /** Store calls so far, by repository. */
  storeOperations(): Readonly<Record<string, number>>;
  /**
   * The network driver's sessions: connected now, logins waiting for their turn, logins refused so far,
   * and times a due login waited for the node to catch up.
   */
  whatsapp(): { connected: number; loginsWaiting: number; loginsRefused: number; loginsHeldBack: number };
}

const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const RENEW_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Stop reasons that hand an instance to another node. */
const HANDOFF_REASONS = new Set(['handoff', 'shutdown']);

/** The longest a scrape waits for the webhook queue's depth. */
const QUEUE_DEPTH_TIMEOUT_MS = 1000;

function withinOrNaN(value: Promise<number>, ms: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<number>((resolve) => {
    timer = setTimeout(() => resolve(Number.NaN), ms);
  });
  return Promise.race([value.catch(() => Number.NaN), late]).finally(() => clearTimeout(timer));
}

let processRegistry: Registry | undefined;

/** Memory, CPU, event loop and GC of this process: collected once, however many nodes it runs. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

type Observer = { observe(value: number): void };
type Incrementer = { inc(): void };

/** A node's metrics. */
export class NodeMetrics implements ActorMetrics, CallMetrics, DeliveryMetrics, RateLimitMetrics {
  readonly registry = new Registry();
  #gauges: Partial<NodeGauges> = {};

  readonly #activations: Counter;
  readonly #stops: Counter<'reason'>;
  readonly #handoffs: Counter;
  readonly #renewSeconds: Histogram;
  readonly #renewFailures: Counter<'kind'>;
  readonly #calls: Histogram<'target' | 'outcome'>;
  readonly #deliveries: Histogram<'outcome'>;
  readonly #rateLimited: Counter<'bucket'>;
  // Label children resolved once, so that the hot paths do a map lookup and no label hashing.
  readonly #callChildren: Record<CallTarget, Map<string, Observer>> = { local: new Map(), remote: new Map() };
  readonly #deliveryChildren: Record<DeliveryOutcome, Observer>;
  readonly #stopChildren = new Map<string, Incrementer>();
  readonly #lostLeases: { inc(n: number): void };
  readonly #renewErrors: Incrementer;
  readonly #rateLimitChildren: Record<RateLimitBucket, Incrementer>;

  constructor(nodeId: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node: nodeId });
    this.#activations = new Counter({
      name: 'switchboard_actor_activations_total',
      help: 'Actors activated on this node',
      registers,
    });
    this.#stops = new Counter({
      name: 'switchboard_actor_stops_total',
      help: 'Actors stopped on this node, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.#handoffs = new Counter({
      name: 'switchboard_actor_handoffs_total',
      help: 'Actors handed to another node (placement change or shutdown)',
      registers,
    });
    this.#renewSeconds = new Histogram({
      name: 'switchboard_lease_renew_duration_seconds',
      help: "One renewal round of all this node's leases",
      buckets: RENEW_BUCKETS,
      registers,
    });
    this.#renewFailures = new Counter({
      name: 'switchboard_lease_renew_failures_total',
      help: 'Leases not renewed (lost: refused by the quorum; error: the whole round failed)',
      labelNames: ['kind'],
      registers,
    });
    this.#calls = new Histogram({
      name: 'switchboard_routed_call_duration_seconds',
      help: "Calls to instances' actors made by this node, by where they ran and outcome (ok or error code)",
      labelNames: ['target', 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#deliveries = new Histogram({
      name: 'switchboard_webhook_delivery_duration_seconds',
      help: 'Webhook POST attempts by outcome (delivered, retried later, buried in the dead letters)',
      labelNames: ['outcome'],
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'switchboard_rate_limit_rejections_total',
      help: 'Requests refused with 429, by bucket',
      labelNames: ['bucket'],
      registers,
    });
    this.#deliveryChildren = {
      delivered: this.#deliveries.labels('delivered'),
      retried: this.#deliveries.labels('retried'),
      buried: this.#deliveries.labels('buried'),
    };
    this.#lostLeases = this.#renewFailures.labels('lost');
    this.#renewErrors = this.#renewFailures.labels('error');
    this.#rateLimitChildren = {
      requests: this.#rateLimited.labels('requests'),
      create: this.#rateLimited.labels('create'),
    };

    const gauges = () => this.#gauges;
    new Gauge({
      name: 'switchboard_actors_owned',
      help: 'Instances whose actor runs on this node',
      registers,
      collect() {
        this.set(gauges().actorsOwned?.() ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_mailbox_depth',
      help: "Calls queued or running in this node's actors, summed",
      registers,
      collect() {
        this.set(gauges().mailboxes?.().total ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_mailbox_depth_max',
      help: 'Calls queued or running in the busiest actor of this node',
      registers,
      collect() {
        this.set(gauges().mailboxes?.().max ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_webhook_queue_depth',
      help: 'Webhook deliveries waiting (cluster mode: the shared queue, the same on every node)',
      registers,
      async collect() {
        const depth = gauges().webhookQueueDepth;
        // A queue that cannot be read (Redis away, or hung) is shown as NaN rather than failing the scrape.
        this.set(depth ? await withinOrNaN(depth(), QUEUE_DEPTH_TIMEOUT_MS) : 0);
      },
    });
    new Gauge({
      name: 'switchboard_broker_up',
      help: "Whether an event broker (rabbitmq, nats) takes this node's events: 1 up, 0 down (its events wait in the delivery queue)",
      labelNames: ['broker'],
      registers,
      collect() {
        this.reset();
        for (const [broker, up] of Object.entries(gauges().brokersUp?.() ?? {})) this.set({ broker }, up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_websocket_clients',
      help: 'WebSocket clients connected to this node, by kind (instance sockets, console streams)',
      labelNames: ['kind'],
      registers,
      collect() {
        const clients = gauges().websocketClients?.() ?? { instance: 0, console: 0 };
        this.set({ kind: 'instance' }, clients.instance);
        this.set({ kind: 'console' }, clients.console);
      },
    });
    new Counter({
      name: 'switchboard_store_operations_total',
      help: 'Store calls of this node, by repository (instances, ownedState, messages…)',
      labelNames: ['repository'],
      registers,
      collect() {
        this.reset();
        for (const [repository, n] of Object.entries(gauges().storeOperations?.() ?? {})) this.inc({ repository }, n);
      },
    });
    new Gauge({
      name: 'switchboard_whatsapp_connected',
      help: 'Instances of this node connected to WhatsApp now',
      registers,
      collect() {
        this.set(gauges().whatsapp?.().connected ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_whatsapp_logins_waiting',
      help: 'Logins to WhatsApp waiting for their turn on this node (CONNECT_RATE_PER_SECOND)',
      registers,
      collect() {
        this.set(gauges().whatsapp?.().loginsWaiting ?? 0);
      },
    });
    new Counter({
      name: 'switchboard_whatsapp_logins_refused_total',
      help: 'Logins of this node that WhatsApp refused with 429 (rate-overlimit) or 503',
      registers,
      collect() {
        this.reset();
        this.inc(gauges().whatsapp?.().loginsRefused ?? 0);
      },
    });
    new Counter({
      name: 'switchboard_whatsapp_logins_held_back_total',
      help: 'Times a login due to leave waited because this node was overloaded (CONNECT_MAX_LOOP_DELAY_MS)',
      registers,
      collect() {
        this.reset();
        this.inc(gauges().whatsapp?.().loginsHeldBack ?? 0);
      },
    });
    new Counter({
      name: 'switchboard_received_media_total',
      help: 'Received media on this node: downloads, uploads to storage, kept copies, and their failures (downloadedBytes in bytes)',
      labelNames: ['event'],
      registers,
      collect() {
        this.reset();
        for (const [event, n] of Object.entries(gauges().receivedMedia?.() ?? {})) this.inc({ event }, n);
      },
    });
  }

  /** Where the gauges read their values; called once the node's parts exist. */
  watch(gauges: Partial<NodeGauges>): void {
    this.#gauges = { ...this.#gauges, ...gauges };
  }

  activated(): void {
    this.#activations.inc();
  }

  stopped(reason: string): void {
    let child = this.#stopChildren.get(reason);
    if (!child) {
      child = this.#stops.labels(reason);
      this.#stopChildren.set(reason, child);
    }
    child.inc();
    if (HANDOFF_REASONS.has(reason)) this.#handoffs.inc();
  }

  leaseRenewal(seconds: number, lost: number): void {
    this.#renewSeconds.observe(seconds);
    if (lost > 0) this.#lostLeases.inc(lost);
  }

  leaseRenewalFailed(): void {
    this.#renewErrors.inc();
  }

  routedCall(target: CallTarget, outcome: string, seconds: number): void {
    const children = this.#callChildren[target];
    let child = children.get(outcome);
    if (!child) {
      child = this.#calls.labels(target, outcome);
      children.set(outcome, child);
    }
    child.observe(seconds);
  }

  deliveryAttempt(outcome: DeliveryOutcome, seconds: number): void {
    this.#deliveryChildren[outcome].observe(seconds);
  }

  rateLimited(bucket: RateLimitBucket): void {
    this.#rateLimitChildren[bucket].inc();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition: this node's metrics, then the process-wide ones. */
  async scrape(): Promise<string> {
    const [node, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${node}\n${process}`;
  }
}
