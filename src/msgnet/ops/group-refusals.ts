import { ForbiddenError } from '../../errors.js';

/** The refusals of group operations, worded alike in every driver. */
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
