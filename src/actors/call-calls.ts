import type { EventCard } from '../msgnet/msgnet-driver.js';

/** The voice-call calls (call-handlers.ts): ring and drop, and the card of a scheduled call. */
export interface CallCallMap {
  'call.offer': { payload: { to: string; seconds: number }; result: { callId: string } };
  /** Rings and plays the file if answered: `audio` is the Ogg/Opus file as base64. */
  'call.audio': {
    payload: { to: string; audio: string; mimetype: string; seconds: number };
    result: { callId: string };
  };
  /** Creates a call link and sends the event card that carries it. */
  'call.schedule': {
    payload: { to: string; card: Omit<EventCard, 'joinLink'> };
    result: { messageId: string; token: string; url: string };
  };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends CallCallMap {}
}
