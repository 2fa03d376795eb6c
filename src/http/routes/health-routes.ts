import type { Logger } from 'pino';
import type { BrokerStatus } from '../../events/brokers/broker-publisher.js';
import { ApiRouter } from '../api-router.js';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

/** How long one round of checks answers every /health request: a busy prober costs one round per period. */
export const HEALTH_REUSE_MS = 250;

type CheckResults = ReadonlyArray<readonly [string, 'ok' | 'down']>;

/**
 * Runs the checks at most once per `reuseMs`: requests that arrive while a round runs, or within
 * `reuseMs` of its start, share its results (and a failing check is logged once per round, not per
 * request).
 */
export function sharedChecks(
  checks: HealthCheck[],
  reuseMs = HEALTH_REUSE_MS,
  now: () => number = performance.now.bind(performance),
): (log: Logger) => Promise<CheckResults> {
  let round: { startedAt: number; results: Promise<CheckResults> } | undefined;
  const run = (log: Logger): Promise<CheckResults> =>
    Promise.all(
      checks.map(async (c) => {
        try {
          await c.check();
          return [c.name, 'ok'] as const;
        } catch (err) {
          log.warn({ err, check: c.name }, 'health check failed');
          return [c.name, 'down'] as const;
        }
      }),
    );
  return (log) => {
    const at = now();
    if (round === undefined || at - round.startedAt >= reuseMs) round = { startedAt: at, results: run(log) };
    return round.results;
  };
}

/** Each broker's state; `events` says where its events are while it is down. */
function brokersView(brokers: Readonly<Record<string, BrokerStatus>> | undefined) {
  if (!brokers || Object.keys(brokers).length === 0) return {};
  return {
    brokers: Object.fromEntries(
      Object.entries(brokers).map(([name, b]) => [
        name,
        {
          status: b.up ? 'up' : 'down',
          since: b.since,
          ...(b.up ? { events: 'published' } : { error: b.error ?? null, events: 'held in the delivery queue' }),
        },
      ]),
    ),
  };
}

/** GET /health: no auth, no rate limit; 503 when a dependency does not answer. */
export function healthRoutes(deps: {
  nodeId: string;
  mode: 'embedded' | 'cluster';
  checks: HealthCheck[];
  /** Where a failing check is logged (once per round, for no request in particular). */
  log: Logger;
  /**
   * The event brokers this node publishes to. One that is down leaves the node healthy (its events wait
   * in the durable queue, and taking every node out of the balancer would not bring it back): it is named.
   */
  brokers?: () => Readonly<Record<string, BrokerStatus>>;
}) {
  const api = new ApiRouter({ tag: 'Operations' });
  const checks = sharedChecks(deps.checks);
  api.route(
    {
      method: 'get',
      path: '/health',
      summary: `Liveness and dependencies (no auth, no rate limit; one round of checks serves ${HEALTH_REUSE_MS} ms)`,
      auth: 'public',
      responses: {
        200: '`{status: "ok", node, mode, checks, brokers?}`: `brokers.<name>: {status: up | down, since, error?, events}`',
        503: '`{status: "degraded", …}`: a dependency does not answer',
      },
    },
    async (ctx) => {
      const results = await checks(deps.log);
      const healthy = results.every(([, s]) => s === 'ok');
      ctx.status = healthy ? 200 : 503;
      const down = results.filter(([, s]) => s === 'down').map(([n]) => n);
      ctx.body = {
        success: healthy,
        ...(healthy
          ? { message: 'ok' }
          : { error: { message: `Service degraded: ${down.join(', ')} not answering`, code: 'unavailable' } }),
        status: healthy ? 'ok' : 'degraded',
        node: deps.nodeId,
        mode: deps.mode,
        checks: Object.fromEntries(results),
        ...brokersView(deps.brokers?.()),
      };
    },
  );
  return api;
}
