import type { GroupAction } from '../msgnet-events.js';
import type { SandboxGroup } from './sandbox-wire.js';

/** What group phones say to each other on the `ops` wire (domain `groups`). */
export type SandboxGroupWire =
  /**
   * A change `author` made: the whole group after it, with the event every member reports (`action`, none
   * for a change no event names: a picture, a new invite code). Sent on the group's JID, and to the numbers
   * of members just added, who do not listen there yet.
   */
  | {
      op: 'change';
      group: SandboxGroup;
      action?: GroupAction;
      participants: string[];
      author: string;
      timestamp: number;
    }
  /** May the asker add you to `groupJid`? Sent to the contact's number: its `groupAdd` privacy answers. */
  | { op: 'may-add'; requestId: string; groupJid: string }
  /** A join with an invite code, sent on the group's JID: the member who answers checks the code. */
  | { op: 'join'; requestId: string; groupJid: string; code: string }
  /** The answer to a `may-add` or a `join`, sent to the asker's number. */
  | { op: 'answer'; requestId: string; ok: boolean };

const OPS = new Set(['change', 'may-add', 'join', 'answer']);

/** A payload of the groups domain as another phone sent it (phones of this build only, so a shape check). */
export function isSandboxGroupWire(payload: unknown): payload is SandboxGroupWire {
  return typeof payload === 'object' && payload !== null && OPS.has((payload as { op?: unknown }).op as string);
}
