import type { OutgoingMedia, SentMessage } from '../outgoing-types.js';

export interface StatusPost {
  type: 'text' | 'image' | 'video' | 'audio';
  text: string;
  media?: OutgoingMedia;
  backgroundColor?: string;
  font?: number;
}

/** Status posts (stories) of the linked number. */
export interface StatusOps {
  publish(post: StatusPost): Promise<SentMessage>;
}
