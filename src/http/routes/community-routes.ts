import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { requireGroupJid } from '../../msgnet/channel-jids.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { groupPicture } from './group-picture.js';
import { either } from './message-send.js';

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

type Deps = ActorRouteDeps;

const COMMUNITY_VIEW = '`{jid, subject, description, groups: [{jid, subject}], joinApproval}`';

const createBody = z.strictObject({
  subject: z.string().trim().max(100).optional().describe("The community's name (required; 'name' is the same field)"),
  name: z.string().trim().max(100).optional().describe("Alias of 'subject'"),
  description: z.string().trim().max(2048).optional(),
  image: z.string().trim().optional().describe('A picture: an http(s) URL, a data: URI or base64 of an image'),
  groupJid: z
    .array(z.string().trim().max(128))
    .max(50)
    .optional()
    .describe('Existing groups to link to it, one second apart'),
  membershipApprovalMode: z
    .enum(['request_required', 'on', 'none', 'off'])
    .optional()
    .describe('`request_required` (or `on`): joining asks an admin first; `none` (or `off`, the default): it does not'),
});

const linkBody = z.strictObject({
  communityJid: z.string().trim().max(128).optional().describe('The community: `<digits>@g.us` (required)'),
  groupJid: z.string().trim().max(128).optional().describe('The group: `<digits>@g.us` (required)'),
});

const hostedLinkBody = z.strictObject({
  communityJid: z.string().trim().max(128).optional().describe('The community: `<digits>@g.us` (required)'),
  groupJid: z
    .union([z.array(z.string().trim().max(128)).min(1).max(50), z.string().trim().max(128)])
    .optional()
    .describe('The groups (one or more): `<digits>@g.us` (required)'),
});

/** The hosted product pauses this long between two links, as WhatsApp throttles them. */
const LINK_PAUSE_MS = 1000;

/** A community's JID; bare digits get `@g.us`, as the hosted product does. */
function communityJidOf(raw: string): string {
  return requireGroupJid(/^\d+(-\d+)?$/.test(raw) ? `${raw}@g.us` : raw, 'communityJid');
}

/** Communities: create, list, and link or unlink groups (the instance must administer both). */
export function communityRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/community', tag: 'Communities', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
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
      const subject = either(b.subject, b.name, ['subject', 'name']);
      if (!subject) throw new ValidationError('subject is required');
      const groups = (b.groupJid ?? []).map((g, i) => requireGroupJid(g, `groupJid[${i}]`));
      const id = ctx.state.instance!.id;
      assertConnected(ctx.state.instance!);
      const picture = b.image ? await groupPicture(b.image, deps.media) : undefined;
      const joinApproval = b.membershipApprovalMode === 'request_required' || b.membershipApprovalMode === 'on';
      let community = await actors.for(ctx).call(id, 'communities.create', {
        subject,
        ...(b.description ? { description: b.description } : {}),
        ...(joinApproval ? { joinApproval } : {}),
      });
      // The hosted product's follow-ups; the community exists whatever they give.
      const problems: string[] = [];
      if (picture !== undefined) {
        await actors
          .for(ctx)
          .call(id, 'groups.update', { groupJid: community.jid, picture })
          .catch((err: unknown) => problems.push(`its picture could not be set: ${reasonOf(err)}`));
      }
      const linked = await linkEach(ctx, id, 'communities.link', community.jid, groups);
      if (linked.failed.length) problems.push(`${linked.failed.length} group(s) could not be linked`);
      if (groups.length) {
        const listed = await actors.for(ctx).call(id, 'communities.list', {});
        community = listed.find((c) => c.jid === community.jid) ?? community;
      }
      ctx.body = {
        success: true,
        message: problems.length ? `Community created, but ${problems.join('; ')}` : 'Community created',
        community,
        isCommunity: true,
        communityJid: community.jid,
        ...(groups.length ? { linked: linked.linked, failed: linked.failed } : {}),
      };
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

  /** Links or unlinks each group in turn, a pause apart; failures are collected, not thrown. */
  const linkEach = async (
    ctx: RouteContext,
    id: string,
    call: 'communities.link' | 'communities.unlink',
    communityJid: string,
    groups: string[],
  ) => {
    const linked: string[] = [];
    const failed: { groupJid: string; error: string }[] = [];
    for (const [i, groupJid] of groups.entries()) {
      if (i > 0) await sleep(LINK_PAUSE_MS);
      try {
        if (groupJid === communityJid) throw new ValidationError('a community is not linked to itself');
        await actors.for(ctx).call(id, call, { communityJid, groupJid });
        linked.push(groupJid);
      } catch (err) {
        failed.push({ groupJid, error: reasonOf(err) });
      }
    }
    return { linked, failed };
  };

  for (const [op, call, verb] of [
    ['link', 'communities.link', ['Linked', 'to']],
    ['unlink', 'communities.unlink', ['Unlinked', 'from']],
  ] as const) {
    nameRequired(api, 'post', `/${op}`, deps.auth);
    api.route(
      {
        method: 'post',
        path: `/${op}/:instance`,
        idempotency: idempotent,
        summary: `${verb[0]} groups ${verb[1]} a community (the hosted product's route: groupJid[])`,
        auth: guard,
        body: hostedLinkBody,
        responses: {
          200: `\`{message: "${verb[0]} N of M groups ${verb[1]} community", communityJid, linked: [...], failed: [{groupJid, error}]}\` (success when one at least)`,
        },
      },
      async (ctx, { body: b }) => {
        if (!b.communityJid) throw new ValidationError('communityJid is required');
        if (b.groupJid === undefined) throw new ValidationError('groupJid is required');
        const communityJid = communityJidOf(b.communityJid);
        const groups = [b.groupJid].flat().map((g, i) => requireGroupJid(g, `groupJid[${i}]`));
        assertConnected(ctx.state.instance!);
        const { linked, failed } = await linkEach(ctx, ctx.state.instance!.id, call, communityJid, groups);
        ctx.body = {
          success: linked.length > 0,
          message: `${verb[0]} ${linked.length} of ${groups.length} groups ${verb[1]} community`,
          communityJid,
          linked,
          failed,
        };
      },
    );
  }

  nameRequired(api, 'get', '/listSubGroups', deps.auth);
  api.route(
    {
      method: 'get',
      path: '/listSubGroups/:instance',
      summary: "The groups of a community (the hosted product's route)",
      auth: guard,
      query: z.object({ communityJid: queryParam.text('The community (bare digits get @g.us)') }),
      responses: {
        200: '`{communityJid, subgroups: [{jid, name, isDefaultSubGroup}]}`',
        404: 'Community not found',
      },
    },
    async (ctx, { query }) => {
      if (!query.communityJid) throw new ValidationError('communityJid is required');
      const communityJid = communityJidOf(query.communityJid);
      const communities = await actors.for(ctx).call(ctx.state.instance!.id, 'communities.list', {});
      const community = communities.find((c) => c.jid === communityJid);
      if (!community) throw new NotFoundError('Community not found');
      const subgroups = community.groups.map((g) => ({ jid: g.jid, name: g.subject, isDefaultSubGroup: false }));
      ctx.body = {
        success: true,
        message: `${subgroups.length} subgroup(s) found`,
        communityJid,
        subgroups,
      };
    },
  );

  return api;
}
