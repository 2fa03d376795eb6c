import { z } from 'zod';
import { heapAfterGc } from '../../metrics/heap-after-gc.js';
import { ApiRouter } from '../api-router.js';
import { requireGlobal, requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';

interface Deps extends ActorRouteDeps {
  probeEnabled: boolean;
}

const probeBody = z.strictObject({ op: z.enum(['describe', 'write', 'link']) });

/** Operator view of the cluster, and (tests only) the probe that drives instance-owned writes. */
export function clusterRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/cluster', tag: 'Cluster', maxBodyBytes: deps.maxBodyBytes });

  api.route(
    {
      method: 'get',
      path: '/nodes',
      summary: 'The live nodes and how many actors each runs',
      auth: requireGlobal(deps.auth),
      responses: { 200: '`{mode, nodes: [{nodeId, url, actors, …}], meta: {total, actors}}`' },
    },
    (ctx) => {
      const nodes = deps.runtime.nodes();
      ctx.body = {
        success: true,
        message: `${nodes.length} ${nodes.length === 1 ? 'node' : 'nodes'} alive`,
        mode: deps.runtime.mode,
        nodes,
        meta: { total: nodes.length, actors: nodes.reduce((n, x) => n + x.actors, 0) },
      };
    },
  );

  if (deps.probeEnabled) {
    api.route(
      {
        method: 'post',
        path: '/probe/:instance',
        summary: 'Tests only (TEST_PROBE_FILE): a call on the instance actor',
        auth: requireInstance(deps.store, deps.auth),
        body: probeBody,
        responses: { 200: '`{servedBy: "local" | "routed", owner}`' },
      },
      async (ctx, { body }) => {
        const kind = body.op === 'describe' ? 'describe' : body.op === 'write' ? 'probe.write' : 'probe.link';
        const owner = await deps.actors.for(ctx).call(ctx.state.instance!.id, kind, {});
        ctx.body = {
          success: true,
          message: 'Probe done',
          servedBy: deps.runtime.host.get(ctx.state.instance!.id) ? 'local' : 'routed',
          owner,
        };
      },
    );

    api.route(
      {
        method: 'post',
        path: '/probe-heap',
        summary: 'Tests only (TEST_PROBE_FILE): a full garbage collection, then the memory in use',
        auth: requireGlobal(deps.auth),
        responses: {
          200: '`{heapUsed, external, rss, actors, gcPauseMs}` (bytes; the longest collection pause in ms)',
        },
      },
      async (ctx) => {
        const memory = await heapAfterGc();
        ctx.body = { success: true, message: 'Heap measured', ...memory, actors: deps.runtime.host.size };
      },
    );
  }

  return api;
}
