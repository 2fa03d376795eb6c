import type { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { requireGroupJid } from '../../msgnet/channel-jids.js';
import { ApiRouter } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { bodies, groupJidOf, groupQuery, inviteCodeOf, participantsOf } from './group-bodies.js';
import { groupPicture } from './group-picture.js';
import {
  GROUP_ANSWER,
  LINK_ANSWER,
  NO_INVITE,
  groupView,
  hostedGroup,
  inviteOf,
  linkAnswer,
  settingsOf,
} from './group-view.js';
import type { GroupInvite } from './group-view.js';
import { either } from './message-send.js';

type Deps = ActorRouteDeps;

/**
 * Changing groups (`/api/group/<op>/:instance`): create, read, update, invite links, join and leave (the
 * members: group-member-routes.ts). Each runs on the instance's owner through `groups.*` actor calls; every member instance then
 * reports the change as `group.flow`.
 */
export function groupChangeRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/group', tag: 'Groups', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  const posts = ['create', 'update', 'reset-link', 'resetLink', 'join', 'leave'];
  for (const path of posts) nameRequired(api, 'post', `/${path}`, deps.auth);
  for (const path of ['info', 'invite-link']) nameRequired(api, 'get', `/${path}`, deps.auth);

  /** The instance of the path, refused early when it is not connected (before a picture is fetched). */
  const connected = (ctx: RouteContext) => {
    const instance = ctx.state.instance!;
    assertConnected(instance);
    return instance.id;
  };

  /** GroupInfo's invite link, read after the change: only admins may read it, so a member's answer has null. */
  const invite = (ctx: RouteContext, id: string, groupJid: string): Promise<GroupInvite> =>
    actors
      .for(ctx)
      .call(id, 'groups.inviteCode', { groupJid })
      .then(({ inviteCode }) => inviteOf(inviteCode))
      .catch(() => NO_INVITE);

  api.route(
    {
      method: 'post',
      path: '/create/:instance',
      idempotency: idempotent,
      summary: 'Create a group',
      auth: guard,
      body: bodies.create,
      responses: { 200: `Group created: ${GROUP_ANSWER}` },
    },
    async (ctx, { body: b }) => {
      const subject = either(b.subject, b.name, ['subject', 'name']);
      if (subject === undefined) throw new ValidationError('subject is required');
      const participants = participantsOf(b.participants);
      const communityJid = b.communityJid ? requireGroupJid(b.communityJid, 'communityJid') : undefined;
      const id = connected(ctx);
      const source = either(b.picture, b.image, ['picture', 'image']);
      const picture = source ? await groupPicture(source, deps.media) : undefined;
      const created = await actors.for(ctx).call(id, 'groups.create', {
        subject,
        participants,
        ...(b.description ? { description: b.description } : {}),
        ...(picture !== undefined ? { picture } : {}),
      });
      let { group } = created;
      const problems = created.pictureError ? [`its picture could not be set: ${created.pictureError}`] : [];
      // The hosted product's follow-ups: its permissions, then the community link. The group exists either way.
      const settings = settingsOf(b.groupSettings);
      if (Object.keys(settings).length) {
        group = await actors
          .for(ctx)
          .call(id, 'groups.update', { groupJid: group.jid, ...settings })
          .catch((err: unknown) => {
            problems.push(`its settings could not be set: ${err instanceof Error ? err.message : String(err)}`);
            return group;
          });
      }
      if (communityJid) {
        await actors
          .for(ctx)
          .call(id, 'communities.link', { communityJid, groupJid: group.jid })
          .then(() => {
            group = { ...group, communityJid };
          })
          .catch((err: unknown) => {
            problems.push(`it could not be linked: ${err instanceof Error ? err.message : String(err)}`);
          });
      }
      const view = groupView(group, true, await invite(ctx, id, group.jid));
      ctx.body = {
        success: true,
        message: problems.length ? `Group created, but ${problems.join('; ')}` : 'Group created successfully',
        group: view,
        ...hostedGroup(view),
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/info/:instance',
      summary: "A group's details and members",
      auth: guard,
      query: groupQuery,
      responses: { 200: GROUP_ANSWER, 404: 'Group not found (or the instance is not in it)' },
    },
    async (ctx, { query }) => {
      const groupJid = groupJidOf(query.groupJid, query.identifier);
      const id = connected(ctx);
      const group = await actors.for(ctx).call(id, 'groups.info', { groupJid });
      const view = groupView(group, query.participants ?? true, await invite(ctx, id, groupJid));
      ctx.body = { success: true, message: 'Group retrieved successfully', group: view, ...hostedGroup(view) };
    },
  );

  const updateGroup = async (ctx: RouteContext, b: z.infer<typeof bodies.update>, missing: string) => {
    const groupJid = groupJidOf(b.groupJid, b.identifier, missing);
    const subject = either(b.subject, b.name, ['subject', 'name']);
    const { description } = b;
    if (b.picture !== undefined && b.image !== undefined) {
      throw new ValidationError("Invalid request body: send 'picture' or 'image', not both");
    }
    // The hosted product's removeImage wins over image; our picture: null removes it too.
    const picture = b.removeImage ? null : b.picture !== undefined ? b.picture : b.image;
    const settings = settingsOf(b.groupSettings);
    const announce = either(b.announce, settings.announce, ['announce', 'groupSettings.membersCanSendMessages']);
    const locked = either(b.locked, settings.locked, ['locked', 'groupSettings.membersCanEditInfo']);
    const { memberAdd, joinApproval } = settings;
    if ([subject, description, picture, announce, locked, memberAdd, joinApproval].every((v) => v === undefined)) {
      throw new ValidationError(
        'At least one field must be provided (subject, description, picture, announce, or locked)',
      );
    }
    const id = connected(ctx);
    const converted = picture ? await groupPicture(picture, deps.media) : picture === '' ? null : picture;
    const group = await actors.for(ctx).call(id, 'groups.update', {
      groupJid,
      ...(subject !== undefined ? { subject } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(converted !== undefined ? { picture: converted } : {}),
      ...(announce !== undefined ? { announce } : {}),
      ...(locked !== undefined ? { locked } : {}),
      ...(memberAdd !== undefined ? { memberAdd } : {}),
      ...(joinApproval !== undefined ? { joinApproval } : {}),
    });
    const changed = [
      ...(subject !== undefined ? ['name'] : []),
      ...(description !== undefined ? ['description'] : []),
      ...(converted !== undefined ? ['image'] : []),
      ...([announce, locked, memberAdd, joinApproval].some((v) => v !== undefined) ? ['groupSettings'] : []),
    ];
    const view = groupView(group, true, await invite(ctx, id, groupJid));
    ctx.body = {
      success: true,
      message: `Group updated successfully: ${changed.join(', ')}`,
      group: view,
      ...hostedGroup(view),
    };
  };
  for (const method of ['post', 'put'] as const) {
    api.route(
      {
        method,
        path: '/update/:instance',
        idempotency: idempotent,
        summary:
          method === 'put'
            ? "Change a group (the hosted product's method: identifier, name, image, removeImage, groupSettings)"
            : "Change a group's name, description, picture or settings (at least one)",
        auth: guard,
        body: bodies.update,
        responses: { 200: `Group updated: ${GROUP_ANSWER}`, 403: 'Only group admins can …' },
      },
      async (ctx, { body: b }) =>
        updateGroup(ctx, b, method === 'put' ? 'Identifier is required' : 'groupJid is required'),
    );
  }

  api.route(
    {
      method: 'get',
      path: '/invite-link/:instance',
      summary: "A group's invite link (admins only)",
      auth: guard,
      query: groupQuery,
      responses: { 200: LINK_ANSWER },
    },
    async (ctx, { query }) => {
      const groupJid = groupJidOf(query.groupJid);
      const { inviteCode } = await actors.for(ctx).call(connected(ctx), 'groups.inviteCode', { groupJid });
      ctx.body = linkAnswer('Invite link retrieved successfully', groupJid, inviteCode);
    },
  );

  for (const path of ['/reset-link/:instance', '/resetLink/:instance']) {
    api.route(
      {
        method: 'post',
        path,
        idempotency: idempotent,
        summary:
          path === '/resetLink/:instance'
            ? "Revoke the invite link and make a new one (the hosted product's path)"
            : 'Revoke the invite link and make a new one (admins only)',
        auth: guard,
        body: bodies.group,
        responses: { 200: LINK_ANSWER },
      },
      async (ctx, { body: b }) => {
        const missing = path === '/resetLink/:instance' ? 'Identifier is required' : 'groupJid is required';
        const groupJid = groupJidOf(b.groupJid, b.identifier, missing);
        const { inviteCode } = await actors.for(ctx).call(connected(ctx), 'groups.resetInvite', { groupJid });
        ctx.body = linkAnswer('Group invite link reset successfully', groupJid, inviteCode);
      },
    );
  }

  api.route(
    {
      method: 'post',
      path: '/join/:instance',
      idempotency: idempotent,
      summary: 'Join a group through its invite code or link',
      auth: guard,
      body: bodies.join,
      responses: {
        200: '`{groupJid, requiresApproval}`',
        404: 'The invite link is invalid or was reset',
        504: 'WhatsApp did not answer in time',
      },
    },
    async (ctx, { body: b }) => {
      const raw = either(either(b.inviteCode, b.link, ['inviteCode', 'link']), b.identifier, [
        'inviteCode',
        'identifier',
      ]);
      if (!raw) throw new ValidationError('inviteCode or link is required');
      const field = b.link !== undefined ? 'link' : b.identifier !== undefined ? 'identifier' : 'inviteCode';
      const inviteCode = inviteCodeOf(raw, field);
      const { groupJid } = await actors.for(ctx).call(connected(ctx), 'groups.join', { inviteCode });
      // No driver reports a join waiting for an admin's approval: the join is done when this answers.
      ctx.body = { success: true, message: 'Successfully joined the group', groupJid, requiresApproval: false };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/leave/:instance',
      idempotency: idempotent,
      summary: 'Leave a group',
      auth: guard,
      body: bodies.group,
      responses: { 200: '`{groupJid}`', 404: 'Group not found (or the instance is not in it)' },
    },
    async (ctx, { body: b }) => {
      const groupJid = groupJidOf(b.groupJid, b.identifier);
      await actors.for(ctx).call(connected(ctx), 'groups.leave', { groupJid });
      ctx.body = { success: true, message: 'Successfully left the group', groupJid };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/leave/:instance',
      summary: "Leave a group (the hosted product's method: ?identifier=)",
      auth: guard,
      query: groupQuery.pick({ groupJid: true, identifier: true }),
      responses: { 200: '`{groupJid}`', 404: 'Group not found (or the instance is not in it)' },
    },
    async (ctx, { query }) => {
      const groupJid = groupJidOf(query.groupJid, query.identifier, 'Identifier is required');
      await actors.for(ctx).call(connected(ctx), 'groups.leave', { groupJid });
      ctx.body = { success: true, message: 'Successfully left the group', groupJid };
    },
  );

  return api;
}
