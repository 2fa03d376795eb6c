import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { PrivacyField, PrivacySettings } from '../../msgnet/msgnet-driver.js';
import { isPlainObject } from '../../validation.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

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

/** Privacy settings of the linked account (spec 4.3), under /api/profile beside the profile's routes. */
export function privacyRoutes(deps: ActorRouteDeps) {
  const api = new ApiRouter({ prefix: '/api/profile', tag: 'Profile', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  nameRequired(api, 'post', '/privacy', deps.auth);
  nameRequired(api, 'get', '/getPrivacy', deps.auth);

  // `GET /privacy` is the hosted product's other path of the same read.
  for (const path of ['/getPrivacy/:instance', '/privacy/:instance']) {
    api.route(
      {
        method: 'get',
        path,
        summary: path === '/privacy/:instance' ? 'The privacy settings (alias of getPrivacy)' : 'The privacy settings',
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
  }

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
