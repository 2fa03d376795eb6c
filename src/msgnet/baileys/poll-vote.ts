import { createHash } from 'node:crypto';
import { decryptPollVote } from '@whiskeysockets/baileys';
import type { WAMessageKey, proto } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { OwnIdentity } from './own-identity.js';
import { userJid } from './jids.js';
import type { PollBook, PollRecord } from './poll-book.js';

/** What reading a vote needs: the polls we know, and our own addresses (the creator or the voter). */
export interface VoteContext {
  polls: PollBook;
  own: OwnIdentity;
  log: Logger;
}

/**
 * The options a `pollUpdateMessage` selects (all of the voter's choices; none withdraws the vote).
 * The vote is encrypted for the poll's id, its creator's and its voter's addresses; since LIDs, either may
 * be the phone-number JID or the LID, so each known pair is tried until one authenticates. An unknown
 * poll or an unreadable vote gives no options (and a log line).
 */
export function readPollVote(
  update: proto.Message.IPollUpdateMessage,
  voteKey: WAMessageKey,
  ctx: VoteContext,
): { pollId: string; options: string[] } {
  const pollKey = update.pollCreationMessageKey;
  const pollId = pollKey?.id ?? '';
  const poll = pollId ? ctx.polls.get(pollId) : undefined;
  const vote = update.vote;
  if (!poll || !vote?.encPayload || !vote.encIv) {
    ctx.log.info({ pollId, voteId: voteKey.id }, poll ? 'a poll vote carries no vote' : 'a vote on an unknown poll');
    return { pollId, options: [] };
  }
  const creators = poll.fromMe || pollKey?.fromMe ? ownAddresses(ctx.own) : [...poll.creators, ...keyAuthors(pollKey)];
  const voters = voteKey.fromMe ? ownAddresses(ctx.own) : keyAuthors(voteKey);
  for (const pollCreatorJid of unique(creators)) {
    for (const voterJid of unique(voters)) {
      let selected: Uint8Array[];
      try {
        selected = decryptPollVote(vote, {
          pollCreatorJid,
          pollMsgId: pollId,
          pollEncKey: poll.secret,
          voterJid,
        }).selectedOptions;
      } catch {
        // The wrong pair of addresses fails authentication: try the next one.
        continue;
      }
      return { pollId, options: optionNames(poll, selected) };
    }
  }
  ctx.log.warn({ pollId, voteId: voteKey.id }, 'could not decrypt a poll vote');
  return { pollId, options: [] };
}

/** A vote names each option by the SHA-256 of its text. */
function optionNames(poll: PollRecord, selected: Uint8Array[]): string[] {
  const byHash = new Map(poll.options.map((name) => [createHash('sha256').update(name).digest('hex'), name]));
  return selected.flatMap((hash) => {
    const name = byHash.get(Buffer.from(hash).toString('hex'));
    return name === undefined ? [] : [name];
  });
}

function ownAddresses(own: OwnIdentity): string[] {
  return [own.jid, own.lid].filter((jid): jid is string => !!jid);
}

/** The author of a message by its key: the group participant, or the chat; with the other address when known. */
function keyAuthors(key: WAMessageKey | null | undefined): string[] {
  if (!key) return [];
  const candidates = key.participant ? [key.participant, key.participantAlt] : [key.remoteJid, key.remoteJidAlt];
  return candidates.filter((jid): jid is string => !!jid).map(userJid);
}

function unique(jids: string[]): string[] {
  return [...new Set(jids)];
}
