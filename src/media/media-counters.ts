/**
 * What happened to received media on this node, as plain counters a metrics module can read
 * (`snapshot()`); they only grow.
 */
export type MediaCounter =
  /** A received file was downloaded from the network. */
  | 'downloaded'
  | 'downloadedBytes'
  | 'downloadFailed'
  /** A file was stored in an instance's bucket. */
  | 'uploaded'
  | 'uploadFailed'
  /** The one copy for base64 deliveries was kept, or could not be. */
  | 'blobKept'
  | 'blobFailed'
  /** A base64 webhook delivery found its copy gone (expired) and was sent without the bytes. */
  | 'blobExpired';

export class MediaCounters {
  readonly #counts: Record<MediaCounter, number> = {
    downloaded: 0,
    downloadedBytes: 0,
    downloadFailed: 0,
    uploaded: 0,
    uploadFailed: 0,
    blobKept: 0,
    blobFailed: 0,
    blobExpired: 0,
  };

  add(counter: MediaCounter, n = 1): void {
    this.#counts[counter] += n;
  }

  snapshot(): Readonly<Record<MediaCounter, number>> {
    return { ...this.#counts };
  }
}
