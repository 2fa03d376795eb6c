import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { MessageDetails, MessageType } from '../../msgnet/msgnet-events.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const number = z
  .string()
  .trim()
  .regex(/^\+?\d{6,20}(@s\.whatsapp\.net)?$/, 'expected a phone number with country code');
const schemas = {
  link: z.strictObject({
    number: z
      .string()
      .trim()
      .regex(/^\+?\d{8,15}$/, 'expected 8 to 15 digits')
      .optional(),
  }),
  inbound: z.strictObject({
    from: number,
    text: z.string().max(65_536).optional(),
    pushName: z.string().max(256).optional(),
    groupJid: z
      .string()
      .regex(/^\d{6,30}(-\d+)?@g\.us$/, 'expected a group JID')
      .optional(),
    buttonReplyId: z.string().max(256).optional(),
    listReplyId: z.string().max(256).optional().describe('The row id of a list the contact chose'),
    contacts: z
      .array(
        z.strictObject({
          fullName: z.string().trim().min(1).max(256),
          phone: z.string().regex(/^\+?\d{6,20}$/, 'expected a phone number with country code'),
          organization: z.string().max(256).optional(),
          email: z.string().max(256).optional(),
          url: z.string().max(2048).optional(),
        }),
      )
      .min(1)
      .max(10)
      .optional()
      .describe('Contact cards instead of a text'),
    reaction: z
      .strictObject({ messageId: z.string().min(1).max(128), emoji: z.string().max(32) })
      .optional()
      .describe('A reaction to a message (an empty emoji removes it)'),
    poll: z
      .strictObject({
        question: z.string().min(1).max(255),
        options: z.array(z.string().min(1).max(100)).min(2).max(12),
        maxAnswer: z.number().int().min(1).max(12).optional(),
      })
      .optional(),
    pollVote: z
      .strictObject({ pollId: z.string().min(1).max(128), options: z.array(z.string().max(100)).max(12) })
      .optional()
      .describe("A vote on a poll the instance sent: the voter's choices (none withdraws the vote)"),
    event: z
      .strictObject({
        name: z.string().min(1).max(256),
        startAt: z.iso.datetime({ offset: true }),
        endAt: z.iso.datetime({ offset: true }).optional(),
        description: z.string().max(2048).optional(),
        location: z.string().max(512).optional(),
        joinLink: z.string().max(2048).optional(),
      })
      .optional(),
    edit: z
      .strictObject({ messageId: z.string().min(1).max(128), text: z.string().min(1).max(65_536) })
      .optional()
      .describe('The contact edits one of its messages'),
    revoked: z
      .strictObject({ messageId: z.string().min(1).max(128) })
      .optional()
      .describe('The contact deletes one of its messages for everyone'),
    forwarded: z.boolean().optional().describe('The message was forwarded from another chat'),
    location: z
      .strictObject({
        latitude: z.number().min(-90).max(90),
        longitude: z.number().min(-180).max(180),
        name: z.string().max(256).optional(),
        address: z.string().max(512).optional(),
      })
      .optional()
      .describe('A shared place instead of a text'),
    mention: z.array(number).max(256).optional().describe('Numbers the message mentions'),
    media: z
      .strictObject({
        kind: z.enum(['image', 'video', 'audio', 'document', 'sticker']),
        mimetype: z.string().max(128),
        fileName: z.string().max(256).optional(),
        caption: z.string().max(4096).optional(),
        size: z.number().int().min(0).optional(),
        base64: z.base64('expected the file as base64').optional(),
        ptt: z.boolean().optional().describe('An audio recorded as a voice note'),
        ptv: z.boolean().optional().describe('A video recorded as a round video note'),
      })
      .optional(),
  }),
  call: z.strictObject({ from: number, isVideo: z.boolean().optional() }),
  group: z.strictObject({
    subject: z.string().trim().min(1).max(100),
    description: z.string().max(2048).optional(),
    participants: z.array(z.strictObject({ number, admin: z.boolean().optional() })).max(1024),
  }),
  labels: z.strictObject({
    chat: number,
    labels: z.array(z.strictObject({ id: z.string().min(1).max(64), name: z.string().min(1).max(100) })).max(20),
  }),
  answerCall: z.strictObject({ callId: z.string().trim().min(1).max(128) }),
  contact: z.strictObject({
    number,
    fullName: z.string().trim().min(1).max(256),
    firstName: z.string().trim().min(1).max(256).optional(),
  }),
  fault: z.strictObject({
    operation: z
      .string()
      .trim()
      .regex(/^[A-Za-z]+(:[A-Za-z]+)?$/, 'expected a session operation such as publishStatus or setPrivacy:lastSeen'),
    message: z.string().trim().min(1).max(500),
  }),
};

type Inbound = z.infer<typeof schemas.inbound>;

/** The typed kind an inbound body asks for, if any: one at a time, never beside a text, media or place. */
function inboundKind(b: Inbound): { kind: MessageType; details: MessageDetails; text: string } | undefined {
  const kinds: { kind: MessageType; details: MessageDetails; text: string }[] = [];
  if (b.listReplyId !== undefined) {
    kinds.push({ kind: 'list_response', details: { selectedRowId: b.listReplyId }, text: '' });
  }
  if (b.contacts) {
    const contacts = b.contacts.map((c) => ({ ...c, phone: c.phone.replace(/^\+/, '') }));
    kinds.push({ kind: 'contact', details: { contacts }, text: contacts.map((c) => c.fullName).join(', ') });
  }
  if (b.reaction) kinds.push({ kind: 'reaction', details: { reaction: b.reaction }, text: b.reaction.emoji });
  if (b.poll) {
    const poll = { ...b.poll, maxAnswer: b.poll.maxAnswer ?? 1 };
    kinds.push({ kind: 'poll', details: { poll }, text: poll.question });
  }
  if (b.pollVote) kinds.push({ kind: 'poll_vote', details: { pollVote: b.pollVote }, text: '' });
  if (b.event) {
    const { startAt, endAt, ...rest } = b.event;
    const event = { ...rest, startAt: Date.parse(startAt), ...(endAt ? { endAt: Date.parse(endAt) } : {}) };
    if (event.endAt !== undefined && event.endAt <= event.startAt) {
      throw new ValidationError('Invalid request body: event.endAt must be after event.startAt');
    }
    kinds.push({ kind: 'event', details: { event }, text: event.name });
  }
  if (b.edit) kinds.push({ kind: 'edit', details: { edit: b.edit }, text: b.edit.text });
  if (b.revoked) kinds.push({ kind: 'revoked', details: { revoked: b.revoked }, text: '' });
  // A list choice carries the chosen row's title as its text; the other kinds have no text of their own.
  const others = [kinds[0]?.kind === 'list_response' ? undefined : b.text, b.media, b.location, b.buttonReplyId];
  if (kinds.length > 1 || (kinds.length === 1 && others.some((v) => v !== undefined))) {
    throw new ValidationError(
      'Invalid request body: send one of text (with media or a place), buttonReplyId, listReplyId, contacts, reaction, poll, pollVote, event, edit, revoked',
    );
  }
  return kinds[0];
}

const digits = (n: string) => n.replace(/^\+/, '').replace(/@s\.whatsapp\.net$/, '');

/**
 * Control endpoints of the simulated network (only with MSGNET_DRIVER=sandbox), with the auth of the
 * `:instance` endpoints: what a phone or a contact would do.
 */
export function sandboxRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/sandbox', tag: 'Sandbox', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  const id = (ctx: RouteContext) => ctx.state.instance!.id;

  api.route(
    {
      method: 'post',
      path: '/link/:instance',
      summary: 'Complete a pending QR or pairing connect, as the phone would',
      auth: guard,
      body: schemas.link,
      responses: { 200: 'Instance linked: `{numberJid}`', 409: 'No connect is pending' },
    },
    async (ctx, { body: { number: n } }) => {
      const { numberJid } = await actors.for(ctx).call(id(ctx), 'sandbox.link', n ? { number: digits(n) } : {});
      ctx.body = { success: true, message: 'Instance linked', numberJid };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/inbound/:instance',
      summary: 'A contact sends the instance a message',
      auth: guard,
      body: schemas.inbound,
      responses: { 200: 'Message delivered to the instance: `{messageId}`' },
    },
    async (ctx, { body: b }) => {
      const kind = inboundKind(b);
      const { messageId } = await actors.for(ctx).call(id(ctx), 'sandbox.inbound', {
        from: `${digits(b.from)}@s.whatsapp.net`,
        text: b.text ?? b.media?.caption ?? b.location?.name ?? kind?.text ?? '',
        ...(kind ? { kind: kind.kind, details: kind.details } : {}),
        ...(b.forwarded && kind?.kind !== 'revoked' ? { details: { ...kind?.details, forwarded: true } } : {}),
        ...(b.pushName ? { pushName: b.pushName } : {}),
        ...(b.groupJid ? { groupJid: b.groupJid } : {}),
        ...(b.buttonReplyId ? { buttonReplyId: b.buttonReplyId } : {}),
        ...(b.media ? { media: b.media } : {}),
        ...(b.location ? { location: b.location } : {}),
        ...(b.mention?.length ? { mentions: b.mention.map((m) => `${digits(m)}@s.whatsapp.net`) } : {}),
      });
      ctx.body = { success: true, message: 'Message delivered to the instance', messageId };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/call/:instance',
      summary: 'A contact calls the instance',
      auth: guard,
      body: schemas.call,
      responses: { 200: 'Call offered to the instance: `{callId}`' },
    },
    async (ctx, { body: b }) => {
      const { callId } = await actors.for(ctx).call(id(ctx), 'sandbox.call', {
        from: `${digits(b.from)}@s.whatsapp.net`,
        isVideo: b.isVideo ?? false,
      });
      ctx.body = { success: true, message: 'Call offered to the instance', callId };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/answerCall/:instance',
      summary: 'The phone answers a call ringing on it (an audio call then plays its file)',
      auth: guard,
      body: schemas.answerCall,
      responses: { 200: 'Call answered: `{callId, from}`', 404: 'Call not found' },
    },
    async (ctx, { body: b }) => {
      const { from } = await actors.for(ctx).call(id(ctx), 'sandbox.answerCall', { callId: b.callId });
      ctx.body = { success: true, message: 'Call answered', callId: b.callId, from };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/outbox/:instance',
      summary: 'What the instance sent, oldest first',
      auth: guard,
      query: z.object({
        to: queryParam.text('Only to this number or JID'),
        after: queryParam.text('Only after this messageId'),
      }),
      responses: { 200: '`{messages: [...], meta: {total}}`' },
    },
    async (ctx, { query: { to, after } }) => {
      const entries = await actors.for(ctx).call(id(ctx), 'sandbox.outbox', {
        ...(to ? { to: to.includes('@') ? to : `${digits(to)}@s.whatsapp.net` } : {}),
        ...(after ? { after } : {}),
      });
      ctx.body = {
        success: true,
        message: `${entries.length} ${entries.length === 1 ? 'message' : 'messages'} sent`,
        messages: entries,
        meta: { total: entries.length },
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/group/:instance',
      summary: 'A group the phone is in',
      auth: guard,
      body: schemas.group,
      responses: { 201: 'Group created: `{group}`' },
    },
    async (ctx, { body: b }) => {
      const group = await actors.for(ctx).call(id(ctx), 'sandbox.group', {
        subject: b.subject,
        description: b.description ?? '',
        participants: b.participants.map((p) => ({ number: digits(p.number), ...(p.admin ? { admin: true } : {}) })),
      });
      ctx.status = 201;
      ctx.body = { success: true, message: 'Group created', group };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/labels/:instance',
      summary: "A chat's labels, as a Business phone sets them",
      auth: guard,
      body: schemas.labels,
      responses: { 200: 'Labels set: `{chat, labels}`' },
    },
    async (ctx, { body: b }) => {
      const { chat } = await actors.for(ctx).call(id(ctx), 'sandbox.labels', {
        chat: `${digits(b.chat)}@s.whatsapp.net`,
        labels: b.labels,
      });
      ctx.body = { success: true, message: 'Labels set', chat, labels: b.labels };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/contact/:instance',
      summary: "A contact the phone saves (synced to the instance's address book)",
      auth: guard,
      body: schemas.contact,
      responses: { 200: 'Contact saved: `{jid}`' },
    },
    async (ctx, { body: b }) => {
      const { jid } = await actors.for(ctx).call(id(ctx), 'sandbox.contact', {
        number: digits(b.number),
        fullName: b.fullName,
        ...(b.firstName ? { firstName: b.firstName } : {}),
      });
      ctx.body = { success: true, message: 'Contact saved', jid };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/fault/:instance',
      summary: 'The next call of a session operation fails with the message given',
      auth: guard,
      body: schemas.fault,
      responses: { 200: '`{operation}`' },
    },
    async (ctx, { body: b }) => {
      const { operation } = await actors.for(ctx).call(id(ctx), 'sandbox.fault', b);
      ctx.body = { success: true, message: `The next ${operation} fails`, operation };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/profile/:instance',
      summary: 'The profile the network holds',
      auth: guard,
      responses: { 200: '`{profile: {name, status, picture}}`' },
    },
    async (ctx) => {
      const profile = await actors.for(ctx).call(id(ctx), 'sandbox.profile', {});
      ctx.body = { success: true, message: 'Profile as the network holds it', profile };
    },
  );

  return api;
}
