import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import type { ProfileUpdate } from '../../actors/profile-calls.js';
import { InternalError, NotFoundError, ValidationError } from '../../errors.js';
import { ImageRejectedError } from '../../media/image.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import { toProfilePicture } from '../../media/profile-picture.js';
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

/** Profile of the linked account (spec 4.3); its privacy is in privacy-routes.ts. */
export function profileRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/profile', tag: 'Profile', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  nameRequired(api, 'post', '/account', deps.auth);

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
        200: "`{profile: {jid, lid, name, about, pictureUrl, isBusiness, profilePicture, profileName, profileStatus, phoneNumber}}` (the last four: the hosted product's names)",
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
        profile: {
          ...profile,
          lid: profile.jid.endsWith('@lid') ? profile.jid : null,
          profilePicture: profile.pictureUrl,
          profileName: profile.name,
          profileStatus: profile.about,
          phoneNumber: profile.jid.endsWith('@s.whatsapp.net') ? profile.jid.split('@')[0]! : null,
        },
      };
    },
  );

  return api;
}
