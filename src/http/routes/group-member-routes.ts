import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import type { JoinRequest, ParticipantAction, ParticipantResult } from '../../msgnet/ops/group-ops.js';
import { GROUP_NOT_FOUND } from '../../msgnet/ops/group-texts.js';
import { ApiRouter } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { bodies, groupJidOf, groupQuery, participantsOf } from './group-bodies.js';

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
 * A group's members (`/api/group/<op>/:instance`): add, remove, promote, demote, and the requests to join.
 * Each runs on the instance's owner through `groups.*` actor calls.
 */
export function groupMemberRoutes(deps: ActorRouteDeps) {
  const api = new ApiRouter({ prefix: '/api/group', tag: 'Groups', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of [...PARTICIPANT_PATHS.map((p) => p.path), 'participants']) {
    nameRequired(api, 'post', `/${path}`, deps.auth);
  }

  /** The instance of the path, refused early when it is not connected. */
  const connected = (ctx: RouteContext) => {
    const instance = ctx.state.instance!;
    assertConnected(instance);
    return instance.id;
  };

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
        const groupJid = groupJidOf(b.groupJid, b.identifier);
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
      method: 'post',
      path: '/participants/:instance',
      idempotency: idempotent,
      summary: "Add, remove, promote or demote participants (the hosted product's one route)",
      auth: guard,
      body: bodies.hostedParticipants,
      responses: {
        200: '`{groupJid, participants: [{jid, outcome, success, error}]}` (200 even when some fail)',
        400: 'Invalid request body: action …; approve and reject are not supported',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.action) throw new ValidationError('action is required');
      const groupJid = groupJidOf(b.groupJid, b.identifier, 'Identifier is required');
      const participants = participantsOf(b.participants);
      if (b.action === 'approve' || b.action === 'reject') {
        const approve = b.action === 'approve';
        const results = await actors
          .for(ctx)
          .call(connected(ctx), 'groups.answerRequests', { groupJid, participants, approve });
        ctx.body = {
          success: true,
          message: approve ? 'Join requests approved' : 'Join requests rejected',
          groupJid,
          participants: results.map(hostedOutcome),
        };
        return;
      }
      const path = PARTICIPANT_PATHS.find((p) => p.action === b.action)!;
      const results = await actors
        .for(ctx)
        .call(connected(ctx), 'groups.participants', { groupJid, action: b.action, participants });
      ctx.body = { success: true, message: path.message, groupJid, participants: results.map(hostedOutcome) };
    },
  );

  nameRequired(api, 'get', '/requests', deps.auth);
  api.route(
    {
      method: 'get',
      path: '/requests/:instance',
      summary: "The pending requests to join a group that needs approval (admins only; the hosted product's route)",
      auth: guard,
      query: groupQuery.pick({ groupJid: true, identifier: true }),
      responses: {
        200: '`{groupJid, requests: [{jid, phoneNumber, requestedAt}], meta: {total}}`',
        400: 'Identifier is required',
        403: 'Not authorized to view group requests (must be admin)',
        404: 'Group not found or you are not a member of this group',
      },
    },
    async (ctx, { query }) => {
      const groupJid = groupJidOf(query.groupJid, query.identifier, 'Identifier is required');
      let requests: JoinRequest[];
      try {
        requests = await actors.for(ctx).call(connected(ctx), 'groups.requests', { groupJid });
      } catch (err) {
        if (err instanceof ForbiddenError) {
          throw new ForbiddenError('Not authorized to view group requests (must be admin)');
        }
        if (err instanceof NotFoundError && err.message === GROUP_NOT_FOUND) {
          throw new NotFoundError('Group not found or you are not a member of this group');
        }
        throw err;
      }
      ctx.body = {
        success: true,
        message: `${requests.length} pending requests found`,
        groupJid,
        requests: requests.map((r) => ({
          jid: r.jid,
          phoneNumber: r.phoneNumber,
          requestedAt: r.requestedAt === null ? null : new Date(r.requestedAt).toISOString(),
        })),
        meta: { total: requests.length },
      };
    },
  );

  return api;
}

/** A participant's outcome, with the hosted product's `success` and `error` beside ours. */
function hostedOutcome(r: ParticipantResult) {
  const ok = ['added', 'invite_sent', 'removed', 'promoted', 'demoted', 'approved', 'rejected'].includes(r.outcome);
  return { ...r, success: ok, error: ok ? null : r.outcome };
}
