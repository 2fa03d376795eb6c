import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { isGroupAddress, parseAddress, requireAddress } from '../../msgnet/jid.js';
import type { GroupDetails, ParticipantAction } from '../../msgnet/ops/group-ops.js';
import { INVITE_LINK_PREFIX } from '../../msgnet/ops/group-texts.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { groupPicture } from './group-picture.js';
import { either } from './message-send.js';

type Deps = ActorRouteDeps;

const MAX_PARTICIPANTS = 256;
const INVITE_CODE = /^[A-Za-z0-9_-]{6,64}$/;
const INVITE_LINK = /^https?:\/\/chat\.whatsapp\.com\/(?:invite\/)?([^/?#]+)\/?(?:[?#].*)?$/i;

const groupJidField = z
  .string()
  .trim()
  .max(128)
  .optional()
  .describe('The group: `<digits>@g.us` or `<digits>-<digits>@g.us` (required)');
const participantsField = z
  .array(z.string().trim().max(128))
  .min(1, `takes 1 to ${MAX_PARTICIPANTS} numbers`)
  .max(MAX_PARTICIPANTS, `takes 1 to ${MAX_PARTICIPANTS} numbers`)
  .optional()
  .describe(`1 to ${MAX_PARTICIPANTS} phone numbers with country code, or JIDs (required)`);
const subjectField = z
  .string()
  .trim()
  .min(1, 'must be 1 to 100 characters')
  .max(100, 'must be 1 to 100 characters')
  .optional();
const descriptionField = z.string().max(2048, 'must be at most 2048 characters').optional();

const bodies = {
  create: z.strictObject({
    subject: subjectField.describe("The group's name, 1 to 100 characters (required)"),
    participants: participantsField,
    description: descriptionField.describe('Up to 2048 characters'),
    picture: z
      .string()
      .trim()
      .optional()
      .describe('An http(s) URL, a data: URI or base64 of a JPEG, PNG, WebP or GIF image (made a JPEG ≤ 640×640)'),
  }),
  update: z.strictObject({
    groupJid: groupJidField,
    subject: subjectField.describe('A new name, 1 to 100 characters'),
    description: descriptionField.describe("A new description, up to 2048 characters ('' removes it)"),
    picture: z
      .string()
      .trim()
      .nullable()
      .optional()
      .describe('A new picture (http(s) URL, data: URI or base64 of an image); null removes it'),
    announce: z.boolean().optional().describe('Only admins send messages'),
    locked: z.boolean().optional().describe("Only admins edit the group's name, description and picture"),
  }),
  participants: z.strictObject({ groupJid: groupJidField, participants: participantsField }),
  group: z.strictObject({ groupJid: groupJidField }),
  join: z.strictObject({
    inviteCode: z.string().trim().max(512).optional().describe('The code of an invite link (or the link itself)'),
    link: z.string().trim().max(512).optional().describe(`An invite link, ${INVITE_LINK_PREFIX}<code>`),
  }),
};

const groupQuery = z.object({ groupJid: queryParam.text('The group: `<digits>@g.us` (required)') });

/** The `groupJid` of a body or query: a group's JID, else a 400 naming the field. */
function groupJidOf(raw: string | undefined): string {
  if (!raw) throw new ValidationError('groupJid is required');
  const jid = parseAddress(raw);
  if (!jid || !isGroupAddress(jid)) {
    throw new ValidationError('Invalid groupJid: expected <digits>@g.us or <digits>-<digits>@g.us');
  }
  return jid;
}

/** The people of a body's `participants`, as JIDs: numbers or user JIDs, never a group, each once. */
function participantsOf(raw: string[] | undefined): string[] {
  if (raw === undefined) throw new ValidationError('participants is required');
  const jids = raw.map((p, i) => {
    const jid = requireAddress(p, `participants[${i}]`);
    if (isGroupAddress(jid)) throw new ValidationError(`Invalid request body: participants[${i}] is a group`);
    return jid;
  });
  if (new Set(jids).size !== jids.length) {
    throw new ValidationError('Invalid request body: participants must be unique');
  }
  return jids;
}

/** The code of an invite, given as a code or as a chat.whatsapp.com link. */
function inviteCodeOf(raw: string, field: string): string {
  const code = /^https?:\/\//i.test(raw) ? INVITE_LINK.exec(raw)?.[1] : raw;
  if (code === undefined && field === 'link') {
    throw new ValidationError(`Invalid link: expected ${INVITE_LINK_PREFIX}<code>`);
  }
  if (code === undefined || !INVITE_CODE.test(code)) {
    throw new ValidationError(`Invalid ${field}: expected the code of a ${INVITE_LINK_PREFIX}<code> link`);
  }
  return code;
}

function groupView(g: GroupDetails) {
  return {
    groupJid: g.jid,
    subject: g.subject,
    description: g.description,
    pictureUrl: g.pictureUrl,
    owner: g.ownerJid,
    createdAt: g.createdAt === null ? null : new Date(g.createdAt).toISOString(),
    settings: g.settings,
    memberCount: g.members.length,
    members: g.members,
    communityJid: g.communityJid,
  };
}

const linkAnswer = (message: string, groupJid: string, inviteCode: string) => ({
  success: true,
  message,
  groupJid,
  inviteCode,
  inviteLink: `${INVITE_LINK_PREFIX}${inviteCode}`,
});

const GROUP_ANSWER =
  '`{group: {groupJid, subject, description, pictureUrl, owner, createdAt, settings: {announce, locked}, memberCount, members: [{jid, isAdmin, isSuperAdmin}], communityJid}}`';
const LINK_ANSWER = `\`{inviteCode, inviteLink: "${INVITE_LINK_PREFIX}<code>"}\``;

/** The participant endpoints: the path, the network's action, and the answer's words. */
const PARTICIPANT_PATHS: { path: string; action: ParticipantAction; summary: string; message: string }[] = [
  {
    path: 'invite',
    action: 'add',
    summary: 'Add participants (an invitation goes to those whose privacy refuses it)',
    message: 'Participants added or invited',
  },
  { path: 'remove', action: 'remove', summary: 'Remove participants', message: 'Participants removed' },
  { path: 'promote', action: 'promote', summary: 'Make participants admins', message: 'Participants promoted' },
  { path: 'demote', action: 'demote', summary: 'Make admins plain participants', message: 'Participants demoted' },
];

/**
 * Changing groups (`/api/group/<op>/:instance`): create, read, update, members, invite links, join and
 * leave. Each runs on the instance's owner through `groups.*` actor calls; every member instance then
 * reports the change as `group.flow`.
 */
export function groupChangeRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/group', tag: 'Groups', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  const posts = ['create', 'update', ...PARTICIPANT_PATHS.map((p) => p.path), 'reset-link', 'join', 'leave'];
  for (const path of posts) nameRequired(api, 'post', `/${path}`, deps.auth);
  for (const path of ['info', 'invite-link']) nameRequired(api, 'get', `/${path}`, deps.auth);

  /** The instance of the path, refused early when it is not connected (before a picture is fetched). */
  const connected = (ctx: RouteContext) => {
    const instance = ctx.state.instance!;
    assertConnected(instance);
    return instance.id;
  };

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
      if (b.subject === undefined) throw new ValidationError('subject is required');
      const participants = participantsOf(b.participants);
      const id = connected(ctx);
      const picture = b.picture ? await groupPicture(b.picture, deps.media) : undefined;
      const { group, pictureError } = await actors.for(ctx).call(id, 'groups.create', {
        subject: b.subject,
        participants,
        ...(b.description ? { description: b.description } : {}),
        ...(picture !== undefined ? { picture } : {}),
      });
      ctx.body = {
        success: true,
        message: pictureError
          ? `Group created, but its picture could not be set: ${pictureError}`
          : 'Group created successfully',
        group: groupView(group),
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
      const groupJid = groupJidOf(query.groupJid);
      const group = await actors.for(ctx).call(connected(ctx), 'groups.info', { groupJid });
      ctx.body = { success: true, message: 'Group retrieved successfully', group: groupView(group) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/update/:instance',
      idempotency: idempotent,
      summary: "Change a group's name, description, picture or settings (at least one)",
      auth: guard,
      body: bodies.update,
      responses: { 200: `Group updated: ${GROUP_ANSWER}`, 403: 'Only group admins can …' },
    },
    async (ctx, { body: b }) => {
      const groupJid = groupJidOf(b.groupJid);
      const { subject, description, picture, announce, locked } = b;
      if ([subject, description, picture, announce, locked].every((v) => v === undefined)) {
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
      });
      ctx.body = { success: true, message: 'Group updated successfully', group: groupView(group) };
    },
  );

  for (const { path, action, summary, message } of PARTICIPANT_PATHS) {
    api.route(
      {
        method: 'post',
        path: `/${path}/:instance`,
        idempotency: idempotent,
        summary,
        auth: guard,
        body: bodies.participants,
        responses: {
          200: '`{groupJid, participants: [{jid, outcome}]}`; outcome: `added`, `already_member`, `not_on_whatsapp`, `invite_sent`, `removed`, `promoted`, `demoted`, `not_member`',
          403: `Only group admins can ${action} participants`,
        },
      },
      async (ctx, { body: b }) => {
        const groupJid = groupJidOf(b.groupJid);
        const participants = participantsOf(b.participants);
        const results = await actors
          .for(ctx)
          .call(connected(ctx), 'groups.participants', { groupJid, action, participants });
        ctx.body = { success: true, message, groupJid, participants: results };
      },
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

  api.route(
    {
      method: 'post',
      path: '/reset-link/:instance',
      idempotency: idempotent,
      summary: 'Revoke the invite link and make a new one (admins only)',
      auth: guard,
      body: bodies.group,
      responses: { 200: LINK_ANSWER },
    },
    async (ctx, { body: b }) => {
      const groupJid = groupJidOf(b.groupJid);
      const { inviteCode } = await actors.for(ctx).call(connected(ctx), 'groups.resetInvite', { groupJid });
      ctx.body = linkAnswer('Invite link reset successfully', groupJid, inviteCode);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/join/:instance',
      idempotency: idempotent,
      summary: 'Join a group through its invite code or link',
      auth: guard,
      body: bodies.join,
      responses: {
        200: '`{groupJid}`',
        404: 'The invite link is invalid or was reset',
        504: 'WhatsApp did not answer in time',
      },
    },
    async (ctx, { body: b }) => {
      const raw = either(b.inviteCode, b.link, ['inviteCode', 'link']);
      if (!raw) throw new ValidationError('inviteCode or link is required');
      const inviteCode = inviteCodeOf(raw, b.link !== undefined ? 'link' : 'inviteCode');
      const { groupJid } = await actors.for(ctx).call(connected(ctx), 'groups.join', { inviteCode });
      ctx.body = { success: true, message: 'Joined the group', groupJid };
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
      const groupJid = groupJidOf(b.groupJid);
      await actors.for(ctx).call(connected(ctx), 'groups.leave', { groupJid });
      ctx.body = { success: true, message: 'Left the group', groupJid };
    },
  );

  return api;
}
