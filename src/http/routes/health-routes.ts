import { ApiRouter } from '../api-router.js';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

/** GET /health: no auth, no rate limit; 503 when a dependency does not answer. */
export function healthRoutes(deps: { nodeId: string; mode: 'embedded' | 'cluster'; checks: HealthCheck[] }) {
  const api = new ApiRouter({ tag: 'Operations' });
  api.route(
    {
      method: 'get',
      path: '/health',
      summary: 'Liveness and dependencies (no auth, no rate limit)',
      auth: 'public',
      responses: {
        200: '`{status: "ok", node, mode, checks}`',
        503: '`{status: "degraded", …}`: a dependency does not answer',
      },
    },
    async (ctx) => {
      const results = await Promise.all(
        deps.checks.map(async (c) => {
          try {
            await c.check();
            return [c.name, 'ok'] as const;
          } catch (err) {
            ctx.state.log.warn({ err, check: c.name }, 'health check failed');
            return [c.name, 'down'] as const;
          }
        }),
      );
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
      };
    },
  );
  return api;
}
