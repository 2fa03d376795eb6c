import { createHash } from 'node:crypto';
import type { NormalizedMessage } from '../msgnet/msgnet-events.js';
import { POLLS_NAMESPACE } from '../store/namespaces.js';
import type { ActorContext } from './actor-context.js';

/** A poll as the owner keeps it for its tally: the question, the options, and each voter's current choice. */
export interface PollTally {
  question: string;
  options: string[];
  /** By voter JID: what they chose last (none: withdrawn), in which message, when (Unix milliseconds). */
  votes: Record<string, { options: string[]; voteMessageId: string; at: number }>;
}

/**
 * Keeps the polls of the instance (sent or received) and their votes, so that any node can answer
 * `GET /api/chat/poll` from the store. A vote replaces the voter's previous one, as WhatsApp counts them.
 * A failure is logged: the tally is a convenience, never a reason to stop the event flow.
 */
export async function recordPoll(ctx: ActorContext, m: NormalizedMessage): Promise<void> {
  try {
    if (m.poll) {
      const existing = await read(ctx, m.id);
      await write(ctx, m.id, { question: m.poll.question, options: m.poll.options, votes: existing?.votes ?? {} });
    } else if (m.pollVote) {
      const { pollId, options } = m.pollVote;
      const tally = (await read(ctx, pollId)) ?? { question: '', options: [], votes: {} };
      tally.votes[m.sender.jid] = { options, voteMessageId: m.id, at: m.timestamp };
      await write(ctx, pollId, tally);
    }
  } catch (err) {
    ctx.log.warn({ err, messageId: m.id }, 'could not record a poll or its vote');
  }
}

/** A poll the instance sends, kept before its echo arrives. */
export async function recordSentPoll(ctx: ActorContext, id: string, question: string, options: string[]) {
  await recordPoll(ctx, {
    id,
    fromMe: true,
    timestamp: Date.now(),
    chat: { jid: '', type: 'private' },
    sender: { jid: '' },
    type: 'poll',
    text: question,
    poll: { question, options, maxAnswer: 1 },
  });
}

async function read(ctx: ActorContext, pollId: string): Promise<PollTally | undefined> {
  const raw = await ctx.store.ownedState.get(ctx.instanceId, POLLS_NAMESPACE, pollId);
  return raw ? (JSON.parse(raw) as PollTally) : undefined;
}

function write(ctx: ActorContext, pollId: string, tally: PollTally) {
  return ctx.writeOwned([{ namespace: POLLS_NAMESPACE, key: pollId, value: JSON.stringify(tally) }]);
}

/** The hosted product's option hash: the upper-case SHA-256 of the option's name. */
export function optionHash(option: string): string {
  return createHash('sha256').update(option).digest('hex').toUpperCase();
}
