import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import type { ProfileUpdate } from '../../actors/actor-calls.js';
import { InternalError, NotFoundError, ValidationError } from '../../errors.js';
import { ImageRejectedError } from '../../media/image.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import { toProfilePicture } from '../../media/profile-picture.js';
import type { PrivacyField, PrivacySettings } from '../../msgnet/msgnet-driver.js';
import { isPlainObject } from '../../validation.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

export const PROFILE_UPDATED = 'Profile updated successfully';

const profileBody = z.strictObject({
  profilePicture: z.string().optional().describe("http(s) URL or base64 data URL of an image; '' removes the picture"),
  profileName: z.string().max(256).optional().describe("The display name ('' changes nothing)"),
  profileStatus: z.string().max(1024).optional().describe("The About text ('' clears it)"),
});

const VISIBILITY = ['all', 'contacts', 'contact_blacklist', 'none'];

/** The privacy fields in the order of spec 2, with their group in the body and their allowed values. */
const PRIVACY_FIELDS: { group: 'visibility' | 'privacy' | 'permissions'; field: PrivacyField; allowed: string[] }[] = [
  { group: 'visibility', field: 'lastSeen', allowed: VISIBILITY },
  { group: 'visibility', field: 'status', allowed: VISIBILITY },
  { group: 'visibility', field: 'profile', allowed: VISIBILITY },
  { group: 'visibility', field: 'online', allowed: ['all', 'match_last_seen'] },
  { group: 'privacy', field: 'readReceipts', allowed: ['all', 'none'] },
  { group: 'permissions', field: 'callAdd', allowed: ['all', 'known'] },
  { group: 'permissions', field: 'groupAdd', allowed: ['all', 'contacts', 'contact_blacklist'] },
];
const GROUPS = ['visibility', 'privacy', 'permissions'] as const;

/**
 * The privacy body as documented, built from the same table `privacyChanges` validates with (which
 * words its refusals as spec 4.3 does, and stops at the first invalid field in the spec's order).
 */
export const privacyBodySchema = z.strictObject(
  Object.fromEntries(
    GROUPS.map((group) => [
      group,
      z
        .strictObject(
          Object.fromEntries(
            PRIVACY_FIELDS.filter((f) => f.group === group).map((f) => [
              f.field,
              z.enum(f.allowed as [string, ...string[]]).optional(),
            ]),
          ),
        )
        .optional(),
    ]),
  ),
);

function settingsView(s: PrivacySettings) {
  return {
    visibility: { lastSeen: s.lastSeen, status: s.status, profile: s.profile, online: s.online },
    privacy: { readReceipts: s.readReceipts },
    permissions: { callAdd: s.callAdd, groupAdd: s.groupAdd },
  };
}

/**
 * The privacy changes of a body, in the spec's field order. Validation stops at the first invalid field
 * (spec 4.3) and nothing is applied then.
 */
export function privacyChanges(raw: unknown): [PrivacyField, string][] {
  if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
  const unknownTop = Object.keys(raw).find((k) => !(GROUPS as readonly string[]).includes(k));
  if (unknownTop !== undefined) throw new ValidationError(`Invalid request body: unknown field '${unknownTop}'`);
  for (const group of GROUPS) {
    const value = raw[group];
    if (value === undefined) continue;
    if (!isPlainObject(value)) throw new ValidationError(`Invalid request body: field '${group}': expected object`);
    const known = PRIVACY_FIELDS.filter((f) => f.group === group).map((f) => f.field as string);
    const unknown = Object.keys(value).find((k) => !known.includes(k));
    if (unknown !== undefined) {
      throw new ValidationError(`Invalid request body: unknown field '${unknown}' in '${group}'`);
    }
  }
  const present = PRIVACY_FIELDS.filter(
    (f) => (raw[f.group] as Record<string, unknown> | undefined)?.[f.field] !== undefined,
  );
  if (present.length === 0) throw new ValidationError('At least one privacy setting must be provided');
  return present.map(({ group, field, allowed }) => {
    const value = (raw[group] as Record<string, unknown>)[field];
    if (typeof value !== 'string' || !allowed.includes(value)) {
      const shown = typeof value === 'string' ? value : JSON.stringify(value);
      throw new ValidationError(`Invalid ${field} value: ${shown}. Valid values: ${allowed.join(', ')}`);
    }
    return [field, value];
  });
}

/** The picture to set, as JPEG base64: from a data URL or a public URL, converted (JPEG q90, ≤ 640x640). */
export async function profilePicture(value: string, deps: Deps, field = 'profilePicture'): Promise<string> {
  const media = deps.media;
  let bytes: Buffer;
  if (value.startsWith('data:')) bytes = decodeBase64Media(value, field, media.maxBytes).bytes;
  else if (/^https?:\/\//i.test(value)) bytes = (await downloadMedia(value, media)).bytes;
  else {
    throw new ValidationError(
      `Invalid request body: ${field} must be an http(s) URL, a base64 data URL, or an empty string`,
    );
  }
  try {
    return (await toProfilePicture(bytes)).toString('base64');
  } catch (err) {
    if (!(err instanceof ImageRejectedError)) throw err;
    if (err.problem === 'corrupt') {
      throw new InternalError(`failed to process profile picture: ${err.message}`, { cause: err });
    }
    throw new ValidationError(`Invalid ${field}: ${err.message}`, { cause: err });
  }
}

/** Profile and privacy of the linked account (spec 4.3). */
export function profileRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/profile', tag: 'Profile', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/account', '/privacy']) nameRequired(api, 'post', path, deps.auth);
  nameRequired(api, 'get', '/getPrivacy', deps.auth);

  api.route(
    {
      method: 'post',
      path: '/account/:instance',
      idempotency: idempotent,
      summary: 'Change the profile picture, name or About text',
      auth: guard,
      body: profileBody,
      responses: { 200: `${PROFILE_UPDATED}: \`{updatedFields}\`` },
    },
    async (ctx, { body: b }) => {
      if (b.profilePicture === undefined && b.profileName === undefined && b.profileStatus === undefined) {
        throw new ValidationError(
          'At least one field must be provided (profilePicture, profileName, or profileStatus)',
        );
      }
      const instance = ctx.state.instance!;
      assertConnected(instance);
      const update: ProfileUpdate = {};
      if (b.profilePicture !== undefined) {
        update.picture = b.profilePicture === '' ? null : await profilePicture(b.profilePicture.trim(), deps);
      }
      // An empty name is a no-op (spec 4.3); an empty status clears the About text.
      if (b.profileName) update.name = b.profileName;
      if (b.profileStatus !== undefined) update.status = b.profileStatus;
      const { updatedFields } = Object.keys(update).length
        ? await actors.for(ctx).call(instance.id, 'profile.update', update)
        : { updatedFields: [] };
      ctx.body = { success: true, message: PROFILE_UPDATED, updatedFields };
    },
  );

  // The hosted product's lookup: the instance's own profile, or a contact's with ?number=.
  api.route(
    {
      method: 'get',
      path: '/getAccount/:instance',
      summary: "The instance's own profile, or a contact's with ?number=",
      auth: guard,
      query: z.object({ number: queryParam.text("A contact's phone number with country code") }),
      responses: {
        200: "`{profile: {jid, name, about, pictureUrl, profilePicture, isBusiness}}` (`profilePicture`: the hosted product's name of `pictureUrl`)",
        404: 'Number is not on WhatsApp',
      },
    },
    async (ctx, { query }) => {
      const raw = query.number;
      const profile = await actors
        .for(ctx)
        .call(ctx.state.instance!.id, 'msgnet.profile', raw ? { jid: toRecipient(raw) } : {});
      if (!profile) throw new NotFoundError('Number is not on WhatsApp');
      ctx.body = {
        success: true,
        message: 'Profile found',
        profile: { ...profile, profilePicture: profile.pictureUrl },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/getPrivacy/:instance',
      summary: 'The privacy settings',
      auth: guard,
      responses: { 200: '`{settings: {visibility, privacy, permissions}}`' },
    },
    async (ctx) => {
      const settings = await actors.for(ctx).call(ctx.state.instance!.id, 'privacy.get', {});
      ctx.body = {
        success: true,
        message: 'Privacy settings retrieved successfully',
        settings: settingsView(settings),
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/privacy/:instance',
      idempotency: idempotent,
      summary: 'Change privacy settings (at least one)',
      auth: guard,
      rawBody: privacyBodySchema,
      responses: { 200: '`{settings: {visibility, privacy, permissions}}`' },
    },
    async (ctx, { body }) => {
      const changes = privacyChanges(body);
      const settings = await actors.for(ctx).call(ctx.state.instance!.id, 'privacy.update', { changes });
      ctx.body = { success: true, message: 'Privacy settings updated successfully', settings: settingsView(settings) };
    },
  );

  return api;
}
