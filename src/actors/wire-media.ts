import type { MediaKind, OutgoingMedia } from '../msgnet/msgnet-driver.js';

/** Media on the wire between nodes: bytes as base64 (payloads are JSON when the owner is another node). */
export interface WireMedia {
  kind: MediaKind;
  base64: string;
  mimetype: string;
  fileName?: string;
  caption?: string;
  ptt?: boolean;
  seconds?: number;
  waveform?: number[];
}

/** The media a call carried, as the session sends it. */
export function outgoingMedia(m: WireMedia): OutgoingMedia {
  return {
    kind: m.kind,
    data: Buffer.from(m.base64, 'base64'),
    mimetype: m.mimetype,
    ...(m.fileName ? { fileName: m.fileName } : {}),
    ...(m.caption ? { caption: m.caption } : {}),
    ...(m.ptt !== undefined ? { ptt: m.ptt } : {}),
    ...(m.seconds !== undefined ? { seconds: m.seconds } : {}),
    ...(m.waveform ? { waveform: Uint8Array.from(m.waveform) } : {}),
  };
}
