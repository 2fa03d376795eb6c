import type { NodeMetrics } from '../../metrics/metrics.js';
import { ApiRouter } from '../api-router.js';
import { requireMetricsToken } from '../auth.js';
import type { Authenticator } from '../auth.js';

/** GET /metrics: Prometheus text exposition of this node, with METRICS_TOKEN or the global token. */
export function metricsRoutes(deps: { auth: Authenticator; metricsToken: string | undefined; metrics: NodeMetrics }) {
  const api = new ApiRouter({ tag: 'Operations' });
  api.route(
    {
      method: 'get',
      path: '/metrics',
      summary: "This node's Prometheus metrics",
      description:
        'Scrape every node (each reports its own actors, calls and clients). Names and meanings: docs/operations.md.',
      auth: requireMetricsToken(deps.auth, deps.metricsToken),
      responses: { 200: { description: 'Prometheus text format 0.0.4', contentType: 'text/plain' } },
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.type = deps.metrics.contentType;
      ctx.body = await deps.metrics.scrape();
    },
  );
  return api;
}
