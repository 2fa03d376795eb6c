import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { isGroupAddress, parseAddress, requireAddress } from '../../msgnet/jid.js';
import { INVITE_LINK_PREFIX } from '../../msgnet/ops/group-texts.js';
import { queryParam } from '../api-router.js';
import { either } from './message-send.js';

/** The bodies and queries of the group routes, and how their group, members and invite codes are read. */

export const MAX_PARTICIPANTS = 256;
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

/** The hosted product's group permissions (`groupSettings`). */
export const groupSettingsField = z
  .strictObject({
    membersCanEditInfo: z.boolean().optional().describe('false: only admins edit the info (our locked)'),
    membersCanSendMessages: z.boolean().optional().describe('false: only admins send (our announce)'),
    membersCanAddOthers: z.boolean().optional().describe('true: every member adds others; false: only admins'),
    requireAdminApproval: z.boolean().optional().describe('true: joining through the link waits for an admin'),
  })
  .optional()
  .describe(
    "The hosted product's permissions: membersCanEditInfo (= not locked), membersCanSendMessages (= not announce), membersCanAddOthers, requireAdminApproval",
  );
const identifierField = z
  .string()
  .trim()
  .max(512)
  .optional()
  .describe("The hosted product's name of the group: its JID (`groupJid`)");

export const bodies = {
  create: z.strictObject({
    subject: subjectField.describe("The group's name, 1 to 100 characters (required; 'name' is the same field)"),
    name: subjectField.describe("Alias of 'subject'"),
    participants: participantsField,
    description: descriptionField.describe('Up to 2048 characters'),
    picture: z
      .string()
      .trim()
      .optional()
      .describe('An http(s) URL, a data: URI or base64 of a JPEG, PNG, WebP or GIF image (made a JPEG ≤ 640×640)'),
    image: z.string().trim().optional().describe("Alias of 'picture'"),
    groupSettings: groupSettingsField,
    communityJid: z.string().trim().max(128).optional().describe('A community to link the new group to'),
  }),
  update: z.strictObject({
    groupJid: groupJidField,
    identifier: identifierField,
    name: subjectField.describe("Alias of 'subject'"),
    image: z.string().trim().optional().describe("Alias of 'picture'"),
    removeImage: z.boolean().optional().describe('true removes the picture (wins over image)'),
    groupSettings: groupSettingsField,
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
  participants: z.strictObject({
    groupJid: groupJidField,
    identifier: identifierField,
    participants: participantsField,
  }),
  hostedParticipants: z.strictObject({
    action: z
      .enum(['add', 'remove', 'promote', 'demote', 'approve', 'reject'])
      .optional()
      .describe('add, remove, promote, demote, or approve or reject join requests (required)'),
    identifier: identifierField,
    groupJid: groupJidField,
    participants: participantsField,
  }),
  group: z.strictObject({ groupJid: groupJidField, identifier: identifierField }),
  join: z.strictObject({
    inviteCode: z.string().trim().max(512).optional().describe('The code of an invite link (or the link itself)'),
    link: z.string().trim().max(512).optional().describe(`An invite link, ${INVITE_LINK_PREFIX}<code>`),
    identifier: z.string().trim().max(512).optional().describe("The hosted product's name: a code or a link"),
  }),
};

export const groupQuery = z.object({
  groupJid: queryParam.text('The group: `<digits>@g.us` (required)'),
  identifier: queryParam.text("The hosted product's name of groupJid"),
  participants: queryParam.flag('participants', 'false leaves the members out (default true)'),
});

/**
 * The group of a body or query, from `groupJid` or the hosted product's `identifier`: a group's JID,
 * else a 400 naming the field. `missing` words the refusal when neither is given.
 */
export function groupJidOf(raw: string | undefined, identifier?: string, missing = 'groupJid is required'): string {
  const given = either(raw, identifier, ['groupJid', 'identifier']);
  if (!given) throw new ValidationError(missing);
  const field = raw !== undefined ? 'groupJid' : 'identifier';
  const jid = parseAddress(given);
  if (!jid || !isGroupAddress(jid)) {
    throw new ValidationError(
      field === 'groupJid'
        ? 'Invalid groupJid: expected <digits>@g.us or <digits>-<digits>@g.us'
        : 'Invalid identifier: expected the group JID (<digits>@g.us); an invite code or link is taken by join only',
    );
  }
  return jid;
}

/** The people of a body's `participants`, as JIDs: numbers or user JIDs, never a group, each once. */
export function participantsOf(raw: string[] | undefined): string[] {
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
export function inviteCodeOf(raw: string, field: string): string {
  const code = /^https?:\/\//i.test(raw) ? INVITE_LINK.exec(raw)?.[1] : raw;
  if (code === undefined && field === 'link') {
    throw new ValidationError(`Invalid link: expected ${INVITE_LINK_PREFIX}<code>`);
  }
  if (code === undefined || !INVITE_CODE.test(code)) {
    throw new ValidationError(`Invalid ${field}: expected the code of a ${INVITE_LINK_PREFIX}<code> link`);
  }
  return code;
}
