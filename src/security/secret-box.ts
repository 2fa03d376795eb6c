import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for the secrets the spec keeps encrypted at rest. The `purpose` is bound as additional
 * authenticated data, so a ciphertext copied into another field (say a proxy password into a webhook
 * authorization) fails to decrypt instead of leaking.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string, purpose: string): string {
    const [version, payload] = sealed.split(':', 2);
    if (version !== VERSION || payload === undefined) throw new Error('Unknown sealed-secret format');
    const raw = Buffer.from(payload, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Sealed secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** Where each sealed secret lives; used as the AAD purpose. */
export const SecretPurpose = {
  InstanceToken: 'instance.token',
  ProxyPassword: 'instance.proxy.password',
  StorageSecretKey: 'instance.storage.secretKey',
  HelpdeskApiToken: 'instance.helpdesk.apiToken',
  HelpdeskWebhookSecret: 'instance.helpdesk.webhookSecret',
  WebhookAuthorization: 'instance.webhook.authorization',
  WebhookSigningSecret: 'instance.webhook.signingSecret',
  AccountWebhookSecret: 'account.webhook.secret',
} as const;
export type SecretPurpose = (typeof SecretPurpose)[keyof typeof SecretPurpose];
