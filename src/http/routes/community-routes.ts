import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { requireGroupJid } from '../../msgnet/channel-jids.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const COMMUNITY_VIEW = '`{jid, subject, description, groups: [{jid, subject}]}`';

const createBody = z.strictObject({
  subject: z.string().trim().max(100).optional().describe("The community's name (required)"),
  description: z.string().trim().max(2048).optional(),
});

const linkBody = z.strictObject({
  communityJid: z.string().trim().max(128).optional().describe('The community: `<digits>@g.us` (required)'),
  groupJid: z.string().trim().max(128).optional().describe('The group: `<digits>@g.us` (required)'),
});

/** Communities: create, list, and link or unlink groups (the instance must administer both). */
export function communityRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/community', tag: 'Communities', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/create', '/link-group', '/unlink-group']) nameRequired(api, 'post', path, deps.auth);
  nameRequired(api, 'get', '/list', deps.auth);

  api.route(
    {
      method: 'post',
      path: '/create/:instance',
      idempotency: idempotent,
      summary: 'Create a community',
      auth: guard,
      body: createBody,
      responses: { 200: `Community created: \`{community: ${COMMUNITY_VIEW}}\`` },
    },
    async (ctx, { body: b }) => {
      if (!b.subject) throw new ValidationError('subject is required');
      const community = await actors.for(ctx).call(ctx.state.instance!.id, 'communities.create', {
        subject: b.subject,
        ...(b.description ? { description: b.description } : {}),
      });
      ctx.body = { success: true, message: 'Community created', community };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/list/:instance',
      summary: 'The communities the instance is in',
      auth: guard,
      responses: { 200: `\`{communities: [${COMMUNITY_VIEW}], meta: {total}}\`` },
    },
    async (ctx) => {
      const communities = await actors.for(ctx).call(ctx.state.instance!.id, 'communities.list', {});
      ctx.body = { success: true, message: 'Communities retrieved', communities, meta: { total: communities.length } };
    },
  );

  for (const [op, call, done] of [
    ['link-group', 'communities.link', 'Group linked to the community'],
    ['unlink-group', 'communities.unlink', 'Group unlinked from the community'],
  ] as const) {
    api.route(
      {
        method: 'post',
        path: `/${op}/:instance`,
        idempotency: idempotent,
        summary: op === 'link-group' ? 'Link a group to a community' : 'Unlink a group from its community',
        auth: guard,
        body: linkBody,
        responses: {
          200: `${done}: \`{communityJid, groupJid}\``,
          403: 'The instance is not an admin of the community or of the group',
        },
      },
      async (ctx, { body: b }) => {
        if (!b.communityJid) throw new ValidationError('communityJid is required');
        if (!b.groupJid) throw new ValidationError('groupJid is required');
        const link = {
          communityJid: requireGroupJid(b.communityJid, 'communityJid'),
          groupJid: requireGroupJid(b.groupJid, 'groupJid'),
        };
        if (link.communityJid === link.groupJid) {
          throw new ValidationError('Invalid groupJid: a community is not linked to itself');
        }
        await actors.for(ctx).call(ctx.state.instance!.id, call, link);
        ctx.body = { success: true, message: done, ...link };
      },
    );
  }

  return api;
}
