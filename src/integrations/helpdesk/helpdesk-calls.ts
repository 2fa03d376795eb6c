import type { HelpdeskConfig } from '../../store/records.js';

/**
 * What POST /api/helpdesk/set changes: only the fields given (the token already sealed by the edge).
 * `paused: true` stops forwarding both ways; `paused: false` resumes.
 */
export interface HelpdeskPatch {
  baseUrl?: string;
  accountId?: number;
  apiTokenSealed?: string;
  inboxName?: string;
  signMessages?: boolean;
  ignoreGroups?: boolean;
  startAsPending?: boolean;
  reopenResolved?: boolean;
  paused?: boolean;
}

/** An attachment of an agent's message, as Chatwoot's webhook gives it. */
export interface AgentAttachment {
  url: string;
  /** Chatwoot's `file_type`: image, audio, video, file… */
  fileType: string;
  fileName?: string;
}

/** What the edge kept of a Chatwoot webhook that concerns WhatsApp (see webhook-payload.ts). */
export type HelpdeskInbound =
  | {
      kind: 'agent-message';
      inboxId: number;
      /** Chatwoot's message id: what redeliveries are recognised by. */
      messageId: number;
      conversationId: number;
      contact: { identifier?: string; phone?: string };
      content: string;
      senderName?: string;
      attachments: AgentAttachment[];
    }
  | {
      kind: 'conversation-status';
      inboxId: number;
      conversationId: number;
      status: string;
    };

/** The helpdesk calls an instance actor answers (merged into ActorCallMap). */
export interface HelpdeskCallMap {
  /** Saves the change and creates or reuses the inbox; `warning` says why the status is `error`. */
  'helpdesk.set': { payload: HelpdeskPatch; result: { config: HelpdeskConfig; warning?: string } };
  /** Activates a creation block (`pending`): the inbox, then `active`, `paused` or `error`. */
  'helpdesk.activate': { payload: Record<string, never>; result: { config: HelpdeskConfig | null } };
  /** Removes the integration and what the bridge kept; the Chatwoot inbox stays. */
  'helpdesk.delete': { payload: Record<string, never>; result: { removed: boolean; inboxId: number | null } };
  /** A Chatwoot webhook, already authenticated by the edge. `accepted: false` when there is nothing to do. */
  'helpdesk.inbound': { payload: HelpdeskInbound; result: { accepted: boolean } };
}

declare module '../../actors/actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends HelpdeskCallMap {}
}
