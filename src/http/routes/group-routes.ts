import Router from '@koa/router';
import type { GroupInfo } from '../../msgnet/msgnet-driver.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import { nameRequired, queryFlag } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

/** Listing members asks the network for every group's participants: spec 8 allows 60 s. */
export const GROUP_MEMBERS_TIMEOUT_MS = 60_000;

function groupView(g: GroupInfo, includeMembers: boolean) {
  return {
    name: g.name,
    groupJid: g.jid,
    description: g.description,
    creatorJid: g.creatorJid,
    memberCount: g.memberCount,
    ...(includeMembers ? { members: g.members ?? [] } : {}),
  };
}

/** Groups of an instance (spec 4.2): all in one response, members only on request. */
export function groupRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/group' });
  nameRequired(router, 'get', '/list', deps.auth);

  router.get('/list/:instance', requireInstance(deps.store, deps.auth), async (ctx) => {
    const includeMembers = queryFlag(ctx, 'includeMembers', false);
    const groups = await deps.runtime.router.call(
      ctx.state.instance!.id,
      'groups.list',
      { includeMembers },
      includeMembers ? Math.max(GROUP_MEMBERS_TIMEOUT_MS, deps.callTimeoutMs) : deps.callTimeoutMs,
    );
    ctx.body = {
      success: true,
      message: 'Groups retrieved successfully',
      groups: groups.map((g) => groupView(g, includeMembers)),
      meta: { total: groups.length },
    };
  });

  return router;
}
