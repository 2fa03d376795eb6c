/** A call link: its token and the URL that carries it. */
export interface CallLink {
  token: string;
  url: string;
}

/** A file to play into a voice call once it is answered (Ogg/Opus, as a voice note). */
export interface CallAudio {
  data: Buffer;
  mimetype: string;
  /** Whole seconds, at least 1. */
  seconds: number;
}

/** Voice and video calls of the linked number. */
export interface CallOps {
  reject(callId: string, from: string): Promise<void>;
  /** Rings `to` and hangs up after `seconds`. */
  offer(to: string, seconds: number): Promise<{ callId: string }>;
  /** Rings `to`, plays `audio` if answered, then hangs up; unanswered, it stops ringing by itself. */
  audioCall(to: string, audio: CallAudio): Promise<{ callId: string }>;
  createLink(kind: 'audio' | 'video', startTime?: number): Promise<CallLink>;
}
