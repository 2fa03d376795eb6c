import type { SentMessage } from '../msgnet/msgnet-driver.js';
import type { WireMedia } from './wire-media.js';

/** A status post as it crosses the wire: media converted by the edge, as base64. */
export interface StatusPayload {
  type: 'text' | 'image' | 'video' | 'audio';
  text: string;
  media?: WireMedia;
  backgroundColor?: string;
  font?: number;
}

/** The status calls (status-handlers.ts). */
export interface StatusCallMap {
  'status.publish': { payload: StatusPayload; result: SentMessage & { senderJid: string } };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends StatusCallMap {}
}
