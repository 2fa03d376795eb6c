import { z } from 'zod';
import type { ProfileUpdate } from '../../actors/profile-calls.js';
import { ValidationError } from '../../errors.js';
import { ApiRouter } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { PROFILE_UPDATED, profilePicture } from './profile-routes.js';

type Deps = ActorRouteDeps;

const bodies = {
  name: z.strictObject({ name: z.string().trim().min(1).max(25).optional().describe('The display name (required)') }),
  status: z.strictObject({
    status: z.string().max(139).optional().describe("The About text (required; '' clears it)"),
  }),
  picture: z.strictObject({
    picture: z.string().trim().optional().describe('An http(s) URL or a base64 data URL of an image (required)'),
  }),
};

/**
 * The per-field forms of the spec's account update (`/api/profile/<field>/:instance`), sharing its actor
 * call and picture conversion, and the profile as one read (`GET /api/profile/info`).
 */
export function profileFieldRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/profile', tag: 'Profile', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const field of ['name', 'status', 'picture']) nameRequired(api, 'post', `/${field}`, deps.auth);
  nameRequired(api, 'delete', '/picture', deps.auth);
  nameRequired(api, 'get', '/info', deps.auth);

  const update = async (ctx: RouteContext, change: ProfileUpdate) => {
    const instance = ctx.state.instance!;
    assertConnected(instance);
    const { updatedFields } = await actors.for(ctx).call(instance.id, 'profile.update', change);
    ctx.body = { success: true, message: PROFILE_UPDATED, updatedFields };
  };
  const responses = { 200: `${PROFILE_UPDATED}: \`{updatedFields}\` (the fields whose value changed)` };

  api.route(
    {
      method: 'get',
      path: '/info/:instance',
      summary: "The linked number's profile: name, About, picture, and the business profile of a Business account",
      auth: guard,
      responses: {
        200: '`{profile: {jid, name, about, pictureUrl, isBusiness, business: {description, category, email, website, address} | null}}`',
      },
    },
    async (ctx) => {
      const instance = ctx.state.instance!;
      assertConnected(instance);
      const profile = await actors.for(ctx).call(instance.id, 'msgnet.profile', {});
      if (!profile) throw new ValidationError('The profile could not be read');
      const { business, ...rest } = profile;
      ctx.body = { success: true, message: 'Profile found', profile: { ...rest, business: business ?? null } };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/name/:instance',
      idempotency: idempotent,
      summary: 'Change the display name',
      auth: guard,
      body: bodies.name,
      responses,
    },
    async (ctx, { body: b }) => {
      if (b.name === undefined) throw new ValidationError('name is required');
      await update(ctx, { name: b.name });
    },
  );

  api.route(
    {
      method: 'post',
      path: '/status/:instance',
      idempotency: idempotent,
      summary: 'Change the About text',
      auth: guard,
      body: bodies.status,
      responses,
    },
    async (ctx, { body: b }) => {
      if (b.status === undefined) throw new ValidationError('status is required');
      await update(ctx, { status: b.status });
    },
  );

  api.route(
    {
      method: 'post',
      path: '/picture/:instance',
      idempotency: idempotent,
      summary: 'Change the profile picture (converted to a JPEG of at most 640×640)',
      auth: guard,
      body: bodies.picture,
      responses,
    },
    async (ctx, { body: b }) => {
      if (!b.picture) throw new ValidationError('picture is required');
      assertConnected(ctx.state.instance!);
      await update(ctx, { picture: await profilePicture(b.picture, deps, 'picture') });
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/picture/:instance',
      idempotency: idempotent,
      summary: 'Remove the profile picture',
      auth: guard,
      responses,
    },
    async (ctx) => update(ctx, { picture: null }),
  );

  return api;
}
