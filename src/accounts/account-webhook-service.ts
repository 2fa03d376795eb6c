import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { DEFAULT_ENTERPRISE_EVENTS, EnterpriseEvent } from '../events/enterprise-events.js';
import type { AccountWebhookDispatcher } from '../events/webhooks/account-webhook-dispatcher.js';
import type { DeadLetter } from '../events/webhooks/delivery.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { maskSecret } from '../security/tokens.js';
import { checkUrlSyntax } from '../security/url-policy.js';
import type { AccountWebhookRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { describeIssue, isPlainObject } from '../validation.js';

/** Every signing secret starts with this, which `secretMasked` keeps visible. */
export const SECRET_PREFIX = 'whsec_';

export interface AccountWebhookView {
  url: string;
  events: string[];
  enabled: boolean;
  secretMasked: string;
}

/** Bodies of PATCH /api/account/webhook and POST …/redeliver (also what the API documents). */
export const patchBody = z.strictObject({
  url: z.string().max(2048).optional(),
  events: z
    .array(z.enum(DEFAULT_ENTERPRISE_EVENTS as [string, ...string[]]))
    .max(16)
    .optional(),
  enabled: z.boolean().optional(),
});

export const redeliverBody = z.strictObject({ ids: z.array(z.string().max(64)).max(1000).optional() });

const newSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64url');

/**
 * The account webhook of spec 4.9: configuration, the signing secret (sealed at rest, shown in clear
 * only when created or rotated) and the test delivery.
 */
export class AccountWebhookService {
  constructor(
    private readonly options: {
      store: Store;
      secrets: SecretBox;
      dispatcher: AccountWebhookDispatcher;
      allowPrivateUrls: boolean;
    },
  ) {}

  #view(w: AccountWebhookRecord | undefined): AccountWebhookView {
    if (!w) return { url: '', events: [...DEFAULT_ENTERPRISE_EVENTS], enabled: false, secretMasked: '' };
    const secret = this.options.secrets.open(w.secretSealed, SecretPurpose.AccountWebhookSecret);
    return { url: w.url, events: w.events, enabled: w.enabled, secretMasked: maskSecret(secret, SECRET_PREFIX) };
  }

  async get(accountId: string): Promise<AccountWebhookView> {
    return this.#view(await this.options.store.accountWebhooks.get(accountId));
  }

  /** Applies the patch; `secret` is present only when this call created the secret. */
  async update(accountId: string, raw: unknown): Promise<AccountWebhookView & { secret?: string }> {
    if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
    const parsed = patchBody.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    const b = parsed.data;
    const existing = await this.options.store.accountWebhooks.get(accountId);
    let url = existing?.url ?? '';
    if (b.url !== undefined) {
      const checked = checkUrlSyntax(b.url.trim(), { allowPrivate: this.options.allowPrivateUrls, requireHttps: true });
      if ('reason' in checked) throw new ValidationError(`Invalid webhook url: ${checked.reason}`);
      url = checked.url.toString();
    }
    if (!url) throw new ValidationError('url is required');
    const secret = existing ? undefined : newSecret();
    const now = new Date().toISOString();
    const record: AccountWebhookRecord = {
      accountId,
      url,
      // Omitted: what was set before, the four defaults on a new configuration.
      events: b.events ? [...new Set(b.events)] : (existing?.events ?? [...DEFAULT_ENTERPRISE_EVENTS]),
      enabled: b.enabled ?? existing?.enabled ?? true,
      secretSealed: existing?.secretSealed ?? this.options.secrets.seal(secret!, SecretPurpose.AccountWebhookSecret),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await this.options.store.accountWebhooks.save(record);
    return { ...this.#view(record), ...(secret ? { secret } : {}) };
  }

  async rotateSecret(accountId: string): Promise<{ secret: string; secretMasked: string }> {
    const existing = await this.options.store.accountWebhooks.get(accountId);
    if (!existing) throw new ValidationError('No account webhook configured');
    const secret = newSecret();
    const now = new Date().toISOString();
    await this.options.store.accountWebhooks.save({
      ...existing,
      secretSealed: this.options.secrets.seal(secret, SecretPurpose.AccountWebhookSecret),
      updatedAt: now,
    });
    return { secret, secretMasked: maskSecret(secret, SECRET_PREFIX) };
  }

  /** Queues `enterprise.webhook.test`, even when the webhook is disabled. */
  async sendTest(accountId: string): Promise<void> {
    const existing = await this.options.store.accountWebhooks.get(accountId);
    if (!existing?.url) throw new ValidationError('No account webhook URL configured');
    await this.options.dispatcher.dispatch(
      { accountId, event: EnterpriseEvent.WebhookTest, description: 'Test delivery of the account webhook', data: {} },
      { force: true },
    );
  }

  deadLetters(accountId: string): Promise<DeadLetter[]> {
    return this.options.dispatcher.deadLetters(accountId);
  }

  /** Replays the account's dead letters (`ids`, or all); the count queued again. */
  async redeliver(accountId: string, raw: unknown): Promise<number> {
    const parsed = redeliverBody.safeParse(raw ?? {});
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    return this.options.dispatcher.redeliver(accountId, parsed.data.ids);
  }
}
