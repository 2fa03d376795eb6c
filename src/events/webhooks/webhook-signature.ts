import { createHmac, randomBytes } from 'node:crypto';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { WebhookRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';

/** The spec's prefix of a signing secret; the rest is the key, base64. */
const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: the Standard Webhooks spec asks for 24 to 64. */
const SECRET_BYTES = 32;
/** How long the secret a rotation replaced still signs deliveries, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new signing secret, and its sealed form for the store. */
export function newWebhookSecret(secrets: SecretBox): { secret: string; sealed: string } {
  const secret = `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
  return { secret, sealed: secrets.seal(secret, SecretPurpose.WebhookSigningSecret) };
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret's decoded bytes (Standard Webhooks). */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt, one signature per secret (two during a rotation). */
export function standardHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => standardSignature(s, id, timestamp, body)).join(' '),
  };
}

/** The secrets a webhook signs with now: its current one, and the one a rotation replaced, for 24 h. */
export function signingSecrets(w: WebhookRecord, secrets: SecretBox, now = Date.now()): string[] {
  const sealed: string[] = [];
  if (w.secretSealed) sealed.push(w.secretSealed);
  if (w.previousSecretSealed && w.previousSecretUntil && Date.parse(w.previousSecretUntil) > now) {
    sealed.push(w.previousSecretSealed);
  }
  return sealed.map((s) => secrets.open(s, SecretPurpose.WebhookSigningSecret));
}

/** Where the worker finds a webhook's signing secrets at each attempt; undefined when the webhook is gone. */
export interface WebhookSecretSource {
  secretsFor(instanceId: string, label: string): Promise<string[] | undefined>;
}

/**
 * Reads the webhook from the store at each attempt, so a rotation made on any node applies to the next
 * attempt; the attempts that start together for one instance share one read.
 */
export function storeWebhookSecrets(store: Store, secrets: SecretBox): WebhookSecretSource {
  const reading = new Map<string, Promise<WebhookRecord[]>>();
  return {
    async secretsFor(instanceId, label) {
      let list = reading.get(instanceId);
      if (!list) {
        list = store.webhooks.list(instanceId).finally(() => reading.delete(instanceId));
        reading.set(instanceId, list);
      }
      const webhook = (await list).find((w) => w.label === label);
      return webhook ? signingSecrets(webhook, secrets) : undefined;
    },
  };
}
