import Router from '@koa/router';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { describeIssue } from '../../validation.js';
import type { AppState } from '../app-state.js';
import { requireGlobal, requireInstance } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';
import type { ActorRouteDeps } from '../route-deps.js';

interface Deps extends ActorRouteDeps {
  probeEnabled: boolean;
}

const probeBody = z.strictObject({ op: z.enum(['describe', 'write', 'link']) });

/** Operator view of the cluster, and (tests only) the probe that drives instance-owned writes. */
export function clusterRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/cluster' });

  router.get('/nodes', requireGlobal(deps.auth), (ctx) => {
    const nodes = deps.runtime.nodes();
    ctx.body = {
      success: true,
      message: `${nodes.length} ${nodes.length === 1 ? 'node' : 'nodes'} alive`,
      mode: deps.runtime.mode,
      nodes,
      meta: { total: nodes.length, actors: nodes.reduce((n, x) => n + x.actors, 0) },
    };
  });

  if (deps.probeEnabled) {
    router.post('/probe/:instance', requireInstance(deps.store, deps.auth), jsonBody(deps.maxBodyBytes), async (ctx) => {
      const parsed = probeBody.safeParse(bodyOf(ctx));
      if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
      const kind = parsed.data.op === 'describe' ? 'describe' : parsed.data.op === 'write' ? 'probe.write' : 'probe.link';
      const owner = await deps.runtime.router.call(ctx.state.instance!.id, kind, {}, deps.callTimeoutMs);
      ctx.body = { success: true, message: 'Probe done', servedBy: deps.runtime.host.get(ctx.state.instance!.id) ? 'local' : 'routed', owner };
    });
  }

  return router;
}
