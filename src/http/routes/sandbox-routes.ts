import Router from '@koa/router';
import { z } from 'zod';
import type { AppContext, AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import { jsonBody } from '../json-body.js';
import { parseBody } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const number = z.string().trim().regex(/^\+?\d{6,20}(@s\.whatsapp\.net)?$/, 'expected a phone number with country code');
const schemas = {
  link: z.strictObject({ number: z.string().trim().regex(/^\+?\d{8,15}$/, 'expected 8 to 15 digits').optional() }),
  inbound: z.strictObject({
    from: number,
    text: z.string().max(65_536).optional(),
    pushName: z.string().max(256).optional(),
    groupJid: z.string().regex(/^\d{6,30}(-\d+)?@g\.us$/, 'expected a group JID').optional(),
    buttonReplyId: z.string().max(256).optional(),
    media: z
      .strictObject({
        kind: z.enum(['image', 'video', 'audio', 'document', 'sticker']),
        mimetype: z.string().max(128),
        fileName: z.string().max(256).optional(),
        caption: z.string().max(4096).optional(),
        size: z.number().int().min(0).optional(),
        base64: z.base64('expected the file as base64').optional(),
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
  fault: z.strictObject({
    operation: z.string().trim().regex(/^[A-Za-z]+(:[A-Za-z]+)?$/, 'expected a session operation such as publishStatus or setPrivacy:lastSeen'),
    message: z.string().trim().min(1).max(500),
  }),
};

const digits = (n: string) => n.replace(/^\+/, '').replace(/@s\.whatsapp\.net$/, '');

/**
 * Control endpoints of the simulated network (only with MSGNET_DRIVER=sandbox), with the auth of the
 * `:instance` endpoints: what a phone or a contact would do.
 */
export function sandboxRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/sandbox' });
  const guard = requireInstance(deps.store, deps.auth);
  const body = jsonBody(deps.maxBodyBytes);
  const call = deps.runtime.router;
  const id = (ctx: AppContext) => ctx.state.instance!.id;

  router.post('/link/:instance', guard, body, async (ctx) => {
    const { number: n } = parseBody(ctx, schemas.link);
    const { numberJid } = await call.call(id(ctx), 'sandbox.link', n ? { number: digits(n) } : {}, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Instance linked', numberJid };
  });

  router.post('/inbound/:instance', guard, body, async (ctx) => {
    const b = parseBody(ctx, schemas.inbound);
    const { messageId } = await call.call(
      id(ctx),
      'sandbox.inbound',
      {
        from: `${digits(b.from)}@s.whatsapp.net`,
        text: b.text ?? b.media?.caption ?? '',
        ...(b.pushName ? { pushName: b.pushName } : {}),
        ...(b.groupJid ? { groupJid: b.groupJid } : {}),
        ...(b.buttonReplyId ? { buttonReplyId: b.buttonReplyId } : {}),
        ...(b.media ? { media: b.media } : {}),
      },
      deps.callTimeoutMs,
    );
    ctx.body = { success: true, message: 'Message delivered to the instance', messageId };
  });

  router.post('/call/:instance', guard, body, async (ctx) => {
    const b = parseBody(ctx, schemas.call);
    const { callId } = await call.call(id(ctx), 'sandbox.call', { from: `${digits(b.from)}@s.whatsapp.net`, isVideo: b.isVideo ?? false }, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Call offered to the instance', callId };
  });

  router.get('/outbox/:instance', guard, async (ctx) => {
    const to = typeof ctx.query.to === 'string' && ctx.query.to ? ctx.query.to : undefined;
    const after = typeof ctx.query.after === 'string' && ctx.query.after ? ctx.query.after : undefined;
    const entries = await call.call(
      id(ctx),
      'sandbox.outbox',
      { ...(to ? { to: to.includes('@') ? to : `${digits(to)}@s.whatsapp.net` } : {}), ...(after ? { after } : {}) },
      deps.callTimeoutMs,
    );
    ctx.body = { success: true, message: `${entries.length} ${entries.length === 1 ? 'message' : 'messages'} sent`, messages: entries, meta: { total: entries.length } };
  });

  router.post('/group/:instance', guard, body, async (ctx) => {
    const b = parseBody(ctx, schemas.group);
    const group = await call.call(
      id(ctx),
      'sandbox.group',
      { subject: b.subject, description: b.description ?? '', participants: b.participants.map((p) => ({ number: digits(p.number), ...(p.admin ? { admin: true } : {}) })) },
      deps.callTimeoutMs,
    );
    ctx.status = 201;
    ctx.body = { success: true, message: 'Group created', group };
  });

  router.post('/labels/:instance', guard, body, async (ctx) => {
    const b = parseBody(ctx, schemas.labels);
    const { chat } = await call.call(id(ctx), 'sandbox.labels', { chat: `${digits(b.chat)}@s.whatsapp.net`, labels: b.labels }, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Labels set', chat, labels: b.labels };
  });

  router.post('/fault/:instance', guard, body, async (ctx) => {
    const b = parseBody(ctx, schemas.fault);
    const { operation } = await call.call(id(ctx), 'sandbox.fault', b, deps.callTimeoutMs);
    ctx.body = { success: true, message: `The next ${operation} fails`, operation };
  });

  router.get('/profile/:instance', guard, async (ctx) => {
    const profile = await call.call(id(ctx), 'sandbox.profile', {}, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Profile as the network holds it', profile };
  });

  return router;
}
