import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { isBlockedAddress } from '../security/url-policy.js';
import type { StorageConfig } from '../store/records.js';
import { NamedError } from '../errors.js';

/**
 * An instance's object storage (S3 or a compatible store: MinIO, R2, Spaces…) through the official
 * client. A custom endpoint uses path-style addressing (`<endpoint>/<bucket>/<key>`), which every
 * compatible store accepts; the standard service uses its regional virtual-hosted addresses.
 */

/** Where files go, with the secret key already opened. */
export interface StorageTarget {
  region: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** A compatible store's URL; undefined for the standard service. */
  endpoint: string | undefined;
  pathPrefix: string;
}

export interface ObjectStorageOptions {
  /** ALLOW_PRIVATE_URLS: lets the endpoint resolve to a private address (tests, on-premises stores). */
  allowPrivateUrls: boolean;
  /** Deadline of one request, retries included. */
  timeoutMs: number;
  /** Lifetime of presigned URLs. */
  urlExpirySeconds: number;
  /** Plain object URLs instead of presigned ones (the bucket allows public reads). */
  publicUrls: boolean;
}

/** A failed storage request, with a readable `reason` for the storage status and the event's error. */
export class StorageError extends NamedError {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}

/** The object written by the credentials check of POST /api/instance/s3 (overwritten at each check). */
export const CHECK_OBJECT = '.switchboard-check';

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'video/3gpp': '3gp',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'application/pdf': 'pdf',
};

/** `pathPrefix` as a key prefix: no leading slash, one trailing slash unless empty. */
export function normalizedPrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed ? `${trimmed}/` : '';
}

/**
 * The key of a received file: `<pathPrefix>/<instanceId>/<yyyy>/<mm>/<dd>/<messageId>.<ext>` (UTC date of
 * the message). The instance id, not its name, keeps two accounts' instances of one name apart in a
 * shared bucket; the extension comes from the file name when it has a plain one, else from the type.
 */
export function objectKey(
  prefix: string,
  instanceId: string,
  messageId: string,
  media: { mimetype: string; fileName?: string | undefined },
  at: number,
): string {
  const d = new Date(at);
  const date = `${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}`;
  const fromName = /\.([A-Za-z0-9]{1,8})$/.exec(media.fileName ?? '')?.[1]?.toLowerCase();
  const ext = fromName ?? EXTENSIONS[media.mimetype.split(';')[0]!.trim().toLowerCase()];
  const id = messageId.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${normalizedPrefix(prefix)}${instanceId}/${date}/${id}${ext ? `.${ext}` : ''}`;
}

/** `Content-Disposition` that keeps a non-ASCII file name (RFC 6266 / 5987). */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * A `lookup` that refuses a host resolving to a private, loopback or otherwise internal address (the URL
 * policy), at every connection: the endpoint was checked when it was saved, but its DNS may change.
 */
function policyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      if (!allowPrivate && addresses.some((a) => isBlockedAddress(a.address))) {
        const refused = Object.assign(new Error(`${hostname} resolves to an internal network address`), {
          code: 'EADDRNOTALLOWED',
        });
        callback(refused, '', 0);
        return;
      }
      const first = addresses[0];
      if (!first) callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      else if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** The endpoint's host, for messages. */
function hostOf(target: StorageTarget): string {
  if (target.endpoint) return new URL(target.endpoint).host;
  return `s3.${target.region}.amazonaws.com`;
}

const CAUSES: Record<string, (t: StorageTarget) => string> = {
  InvalidAccessKeyId: () => 'the access key id is not known to the storage service',
  SignatureDoesNotMatch: () => 'the secret access key does not match the access key id',
  NoSuchBucket: (t) => `bucket "${t.bucket}" does not exist`,
  AccessDenied: (t) =>
    `access to bucket "${t.bucket}" was denied (check the key's permissions: s3:PutObject and s3:GetObject)`,
  PermanentRedirect: (t) => `bucket "${t.bucket}" is not in region "${t.region}"`,
  AuthorizationHeaderMalformed: (t) => `the request was refused for region "${t.region}" (is it the bucket's region?)`,
  InvalidBucketName: (t) => `"${t.bucket}" is not a valid bucket name for this store`,
};

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS failure)',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ETIMEDOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
};

/** A readable cause for a failed storage request: what to fix, then the store's own error name. */
export function describeStorageError(err: unknown, target: StorageTarget, timeoutMs: number): string {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: unknown;
  };
  const host = hostOf(target);
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return `no answer from ${host} within ${timeoutMs} ms`;
  const cause = e?.name ? CAUSES[e.name] : undefined;
  if (cause) return `${cause(target)} (${e.name})`;
  const code = e?.code ?? (e?.cause as { code?: string } | undefined)?.code;
  if (code === 'EADDRNOTALLOWED') return `${host} resolves to an internal network address, which is not allowed`;
  if (code && NETWORK[code]) return `cannot reach ${host}: ${NETWORK[code]}`;
  const status = e?.$metadata?.httpStatusCode;
  const name = e?.name && e.name !== 'Error' && e.name !== 'Unknown' ? e.name : undefined;
  if (status !== undefined) {
    return `the storage service refused the request: ${name ?? 'HTTP'} ${status}${e?.message && e.message !== 'UnknownError' ? ` (${e.message})` : ''}`;
  }
  return e?.message ? `storage request failed: ${e.message}` : 'storage request failed';
}

/** One instance's bucket: uploads, object URLs and the credentials check. */
export class ObjectStorage {
  constructor(
    private readonly client: S3Client,
    readonly target: StorageTarget,
    private readonly options: ObjectStorageOptions,
  ) {}

  /** Uploads `data` under `key`. @throws StorageError with a readable reason */
  async put(key: string, data: Buffer, contentType: string, fileName?: string): Promise<void> {
    const command = new PutObjectCommand({
      Bucket: this.target.bucket,
      Key: key,
      Body: data,
      ContentType: contentType,
      ContentLength: data.length,
      ...(fileName ? { ContentDisposition: contentDisposition(fileName) } : {}),
    });
    try {
      await this.client.send(command, { abortSignal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (err) {
      throw new StorageError(describeStorageError(err, this.target, this.options.timeoutMs), { cause: err });
    }
  }

  /** The object's bytes, at most `maxBytes` of them. @throws StorageError with a readable reason */
  async get(key: string, maxBytes: number): Promise<Buffer> {
    const command = new GetObjectCommand({ Bucket: this.target.bucket, Key: key });
    try {
      const out = await this.client.send(command, { abortSignal: AbortSignal.timeout(this.options.timeoutMs) });
      if (out.ContentLength !== undefined && out.ContentLength > maxBytes) {
        throw new Error(`the object is larger than ${maxBytes} bytes`);
      }
      const bytes = Buffer.from((await out.Body?.transformToByteArray()) ?? new Uint8Array());
      if (bytes.length > maxBytes) throw new Error(`the object is larger than ${maxBytes} bytes`);
      return bytes;
    } catch (err) {
      throw new StorageError(describeStorageError(err, this.target, this.options.timeoutMs), { cause: err });
    }
  }

  /** Writes the small check object under the prefix: the permission uploads need, and nothing more. */
  async check(): Promise<void> {
    await this.put(`${normalizedPrefix(this.target.pathPrefix)}${CHECK_OBJECT}`, Buffer.from('ok\n'), 'text/plain');
  }

  /** Where a client downloads the object: presigned (computed locally) or plain, as configured. */
  async url(key: string): Promise<string> {
    if (this.options.publicUrls) return this.publicUrl(key);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.target.bucket, Key: key }), {
      expiresIn: this.options.urlExpirySeconds,
    });
  }

  publicUrl(key: string): string {
    const path = key.split('/').map(encodeURIComponent).join('/');
    const { endpoint, bucket, region } = this.target;
    if (endpoint) return `${endpoint.replace(/\/+$/, '')}/${bucket}/${path}`;
    // Dotted bucket names break the wildcard certificate of virtual-hosted addresses.
    if (bucket.includes('.')) return `https://s3.${region}.amazonaws.com/${bucket}/${path}`;
    return `https://${bucket}.s3.${region}.amazonaws.com/${path}`;
  }
}

interface CachedClient {
  client: S3Client;
  agents: [HttpAgent, HttpsAgent];
}

/** Clients kept per node: one per (region, endpoint, credentials), the least recently used dropped first. */
const MAX_CLIENTS = 64;

/** Builds each instance's `ObjectStorage`, reusing an S3 client (and its connections) per credentials. */
export class ObjectStorageClients {
  readonly #clients = new Map<string, CachedClient>();

  constructor(readonly options: ObjectStorageOptions) {}

  for(target: StorageTarget): ObjectStorage {
    const key = JSON.stringify([target.region, target.endpoint ?? '', target.accessKey, target.secretKey]);
    let cached = this.#clients.get(key);
    if (cached) {
      this.#clients.delete(key);
    } else {
      cached = this.#create(target);
      if (this.#clients.size >= MAX_CLIENTS) {
        const [oldest, evicted] = this.#clients.entries().next().value as [string, CachedClient];
        this.#clients.delete(oldest);
        this.#destroy(evicted);
      }
    }
    this.#clients.set(key, cached);
    return new ObjectStorage(cached.client, target, this.options);
  }

  #create(target: StorageTarget): CachedClient {
    const lookup = policyLookup(this.options.allowPrivateUrls);
    const agents: [HttpAgent, HttpsAgent] = [
      new HttpAgent({ keepAlive: true, lookup }),
      new HttpsAgent({ keepAlive: true, lookup }),
    ];
    const client = new S3Client({
      region: target.region,
      credentials: { accessKeyId: target.accessKey, secretAccessKey: target.secretKey },
      ...(target.endpoint
        ? {
            endpoint: target.endpoint,
            forcePathStyle: true,
            // Compatible stores differ in the optional checksums they accept; send them only when required.
            requestChecksumCalculation: 'WHEN_REQUIRED' as const,
            responseChecksumValidation: 'WHEN_REQUIRED' as const,
          }
        : {}),
      maxAttempts: 2,
      requestHandler: {
        httpAgent: agents[0],
        httpsAgent: agents[1],
        connectionTimeout: Math.min(this.options.timeoutMs, 10_000),
        requestTimeout: this.options.timeoutMs,
      },
    });
    return { client, agents };
  }

  #destroy(c: CachedClient): void {
    c.client.destroy();
    for (const a of c.agents) a.destroy();
  }

  close(): void {
    for (const c of this.#clients.values()) this.#destroy(c);
    this.#clients.clear();
  }
}

/** The storage block as a target, its secret key opened. */
export function storageTarget(config: StorageConfig, secrets: SecretBox): StorageTarget {
  return {
    region: config.region,
    bucket: config.bucket,
    accessKey: config.accessKey,
    secretKey: config.secretKeySealed ? secrets.open(config.secretKeySealed, SecretPurpose.StorageSecretKey) : '',
    endpoint: config.endpoint,
    pathPrefix: config.pathPrefix,
  };
}
