import { ForbiddenError } from '../../errors.js';

/** What group operations say, alike in every driver and at the edge: refusals, and the invite link's form. */
export const INVITE_LINK_PREFIX = 'https://chat.whatsapp.com/';
/** The text WhatsApp puts in an invitation sent instead of an add. */
export const INVITE_TEXT = 'Follow this link to join my WhatsApp group';

export const GROUP_NOT_FOUND = 'Group not found';
export const INVALID_INVITE = 'The invite link is invalid or was reset';
export const NO_ANSWER = 'WhatsApp did not answer in time';

/** What a member who is not an admin may not do: `Only group admins can <what>`. */
export function adminOnly(what: string): ForbiddenError {
  return new ForbiddenError(`Only group admins can ${what}`);
}

/** The words of `adminOnly` for each participant action. */
export const PARTICIPANT_VERBS = {
  add: 'add participants',
  remove: 'remove participants',
  promote: 'promote participants',
  demote: 'demote participants',
} as const;
