import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { Config } from '../config/config.js';
import { RedisMediaBlobs, StoreMediaBlobs } from '../media/media-blobs.js';
import type { MediaBlobStore } from '../media/media-blobs.js';
import { MediaCounters } from '../media/media-counters.js';
import { ObjectStorageClients } from '../media/object-storage.js';
import type { Store } from '../store/store.js';

export interface NodeMedia {
  counters: MediaCounters;
  /** One kept copy per received file for base64 consumers: Redis in cluster mode, else the store. */
  blobs: MediaBlobStore;
  /** The instances' buckets (S3-compatible object storage). */
  storage: ObjectStorageClients;
}

/** Where received media goes: kept copies, buckets, and the counters the metrics read. */
export function buildMedia(deps: { config: Config; store: Store; runtime: ClusterRuntime }): NodeMedia {
  const { config, store, runtime } = deps;
  return {
    counters: new MediaCounters(),
    blobs: runtime.redis ? new RedisMediaBlobs(runtime.redis) : new StoreMediaBlobs(store.mediaBlobs),
    storage: new ObjectStorageClients({
      allowPrivateUrls: config.allowPrivateUrls,
      timeoutMs: config.receivedMedia.storageTimeoutMs,
      urlExpirySeconds: config.receivedMedia.urlExpirySeconds,
      publicUrls: config.receivedMedia.publicUrls,
    }),
  };
}
