/** The four kinds of media the service sends. */
export type MediaClass = 'image' | 'video' | 'audio' | 'document';

export interface SniffedType {
  mime: string;
  kind: MediaClass;
}

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** ISO base media (`....ftyp<brand>`): MP4, QuickTime, 3GP, M4A, HEIC and AVIF share the container. */
function isoMedia(bytes: Buffer): SniffedType {
  const brand = ascii(bytes, 8, 12);
  if (brand === 'M4A ' || brand === 'M4B ') return { mime: 'audio/mp4', kind: 'audio' };
  if (brand === 'qt  ') return { mime: 'video/quicktime', kind: 'video' };
  if (brand.startsWith('3g')) return { mime: 'video/3gpp', kind: 'video' };
  if (['heic', 'heix', 'mif1', 'msf1'].includes(brand)) return { mime: 'image/heic', kind: 'image' };
  if (brand === 'avif') return { mime: 'image/avif', kind: 'image' };
  return { mime: 'video/mp4', kind: 'video' };
}

/** Matroska/WebM: the DocType element names which one within the first bytes. */
function matroska(bytes: Buffer): SniffedType {
  return ascii(bytes, 0, 64).includes('webm')
    ? { mime: 'video/webm', kind: 'video' }
    : { mime: 'video/x-matroska', kind: 'video' };
}

/**
 * The media type from the first bytes (magic numbers), never from a name, an extension or a header the
 * client chose. Undefined when nothing is recognised.
 */
export function sniffMedia(bytes: Buffer): SniffedType | undefined {
  if (bytes.length < 4) return undefined;
  const b = bytes;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { mime: 'image/jpeg', kind: 'image' };
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { mime: 'image/png', kind: 'image' };
  }
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return { mime: 'image/gif', kind: 'image' };
  if (ascii(b, 0, 4) === 'RIFF') {
    const form = ascii(b, 8, 12);
    if (form === 'WEBP') return { mime: 'image/webp', kind: 'image' };
    if (form === 'WAVE') return { mime: 'audio/wav', kind: 'audio' };
    if (form === 'AVI ') return { mime: 'video/x-msvideo', kind: 'video' };
    return undefined;
  }
  if (ascii(b, 0, 2) === 'BM' && b.length > 26) return { mime: 'image/bmp', kind: 'image' };
  if (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*') return { mime: 'image/tiff', kind: 'image' };
  if (ascii(b, 4, 8) === 'ftyp') return isoMedia(b);
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return matroska(b);
  if (ascii(b, 0, 4) === 'OggS') {
    // The first page holds the codec's header: OpusHead for Opus.
    return ascii(b, 0, 64).includes('OpusHead')
      ? { mime: 'audio/ogg; codecs=opus', kind: 'audio' }
      : { mime: 'audio/ogg', kind: 'audio' };
  }
  if (ascii(b, 0, 4) === 'fLaC') return { mime: 'audio/flac', kind: 'audio' };
  if (ascii(b, 0, 5) === '#!AMR') return { mime: 'audio/amr', kind: 'audio' };
  if (ascii(b, 0, 3) === 'ID3') return { mime: 'audio/mpeg', kind: 'audio' };
  // Frame sync: ADTS AAC has layer bits 00, MPEG audio (MP3) any other layer.
  if (b[0] === 0xff && ((b[1] ?? 0) & 0xf6) === 0xf0) return { mime: 'audio/aac', kind: 'audio' };
  if (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0) return { mime: 'audio/mpeg', kind: 'audio' };
  if (ascii(b, 0, 5) === '%PDF-') return { mime: 'application/pdf', kind: 'document' };
  if (ascii(b, 0, 4) === 'PK\u0003\u0004') return { mime: 'application/zip', kind: 'document' };
  return undefined;
}
