import type { MessageDetails, MessageType } from '../../msgnet/msgnet-events.js';
import type { SandboxProfile } from '../../msgnet/sandbox/sandbox-phone.js';
import type { OutboxEntry, SandboxGroup } from '../../msgnet/sandbox/sandbox-wire.js';

/** A contact's message to a sandbox instance (POST /api/sandbox/inbound). */
export interface SandboxInbound {
  from: string;
  text: string;
  pushName?: string;
  groupJid?: string;
  buttonReplyId?: string;
  media?: {
    kind: 'image' | 'video' | 'audio' | 'document' | 'sticker';
    mimetype: string;
    fileName?: string;
    caption?: string;
    size?: number;
    /** The file's bytes, which the instance can then download. */
    base64?: string;
  };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  mentions?: string[];
  /** A kind beyond text, media and location, with its content. */
  kind?: MessageType;
  details?: MessageDetails;
}

/** The sandbox controls' calls, answered only where the driver is the sandbox (sandbox-extension.ts). */
export interface SandboxCallMap {
  'sandbox.link': { payload: { number?: string }; result: { numberJid: string } };
  'sandbox.inbound': { payload: SandboxInbound; result: { messageId: string } };
  'sandbox.call': { payload: { from: string; isVideo: boolean }; result: { callId: string } };
  /** The phone answers a call ringing on it. */
  'sandbox.answerCall': { payload: { callId: string }; result: { from: string } };
  'sandbox.outbox': { payload: { to?: string; after?: string }; result: OutboxEntry[] };
  'sandbox.group': {
    payload: { subject: string; description: string; participants: { number: string; admin?: boolean }[] };
    result: SandboxGroup;
  };
  'sandbox.labels': { payload: { chat: string; labels: { id: string; name: string }[] }; result: { chat: string } };
  /** The phone saves a contact (its address book syncs to the linked device). */
  'sandbox.contact': { payload: { number: string; fullName: string; firstName?: string }; result: { jid: string } };
  /** The next call of `operation` fails with `message` (simulated network failures). */
  'sandbox.fault': { payload: { operation: string; message: string }; result: { operation: string } };
  'sandbox.profile': { payload: Record<string, never>; result: SandboxProfile };
}

declare module '../../actors/actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends SandboxCallMap {}
}
