import { z } from 'zod';
import type { GroupInfo } from '../../msgnet/msgnet-driver.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { nameRequired } from '../route-helpers.js';
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

const listQuery = z.object({ includeMembers: queryParam.flag('includeMembers', "List each group's members (slower)") });

/** Groups of an instance (spec 4.2): all in one response, members only on request. */
export function groupRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/group', tag: 'Groups' });
  nameRequired(api, 'get', '/list', deps.auth);

  api.route(
    {
      method: 'get',
      path: '/list/:instance',
      summary: "The instance's groups",
      auth: requireInstance(deps.store, deps.auth),
      query: listQuery,
      responses: {
        200: '`{groups: [{name, groupJid, description, creatorJid, memberCount, members?}], meta: {total}}`',
      },
    },
    async (ctx, { query }) => {
      const includeMembers = query.includeMembers ?? false;
      const groups = await deps.actors
        .for(ctx)
        .call(
          ctx.state.instance!.id,
          'groups.list',
          { includeMembers },
          includeMembers ? Math.max(GROUP_MEMBERS_TIMEOUT_MS, deps.actors.timeoutMs) : undefined,
        );
      ctx.body = {
        success: true,
        message: 'Groups retrieved successfully',
        groups: groups.map((g) => groupView(g, includeMembers)),
        meta: { total: groups.length },
      };
    },
  );

  return api;
}
