import type { ActorContext } from '../../actors/instance-actor.js';
import type { HelpdeskOptions } from '../../config/config.js';
import { NotFoundError, ValidationError, isOwnershipLoss, reasonOf } from '../../errors.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { generateToken } from '../../security/tokens.js';
import type { HelpdeskConfig } from '../../store/records.js';
import type { BridgeState } from './bridge-state.js';
import { ChatwootClient } from './chatwoot-client.js';
import { ChatwootError } from './chatwoot-http.js';
import type { HelpdeskPatch } from './helpdesk-calls.js';
import { helpdeskWebhookUrl, mergeHelpdeskPatch, withoutTrailingSlash } from './helpdesk-settings.js';
import { ensureInbox } from './inbox-setup.js';

export interface BridgeConfigDeps {
  secrets: SecretBox;
  options: HelpdeskOptions;
  allowPrivateUrls: boolean;
  /** The service's public address, for the inbox's webhook URL. */
  publicBaseUrl(): string;
  /** First backoff between attempts of one Chatwoot operation. @default 250 */
  retryBaseMs?: number;
}

/**
 * One instance's helpdesk configuration block as its owner keeps it: read, saved under the owner's
 * epoch, changed by the operator, and the Chatwoot client and inbox it points at.
 *
 * Status (persisted in the configuration block, see docs/helpdesk.md):
 * - `pending` → `active` | `error` | `paused` when the creation block is activated;
 * - `active` → `error` after HELPDESK_ERROR_AFTER consecutive failed Chatwoot operations, or at once when
 *   Chatwoot refuses the token (401/403);
 * - `error` → `active` on the next operation that succeeds;
 * - any → `paused` by set with `paused: true` (nothing forwarded either way), back by `paused: false`.
 */
export class BridgeConfig {
  /** The block as this owner last read or saved it; undefined when the instance has none. */
  current: HelpdeskConfig | undefined;
  #failures = 0;
  #client: { key: string; client: ChatwootClient } | undefined;

  constructor(
    private readonly deps: BridgeConfigDeps,
    private readonly instanceId: string,
    private readonly ctx: () => ActorContext,
    private readonly state: BridgeState,
  ) {}

  async stored(): Promise<HelpdeskConfig | undefined> {
    const ctx = this.ctx();
    const instance = await ctx.store.instances.findById(ctx.instanceId);
    if (!instance) throw new NotFoundError('Instance not found');
    return instance.config.helpdesk;
  }

  /** Writes the block under the owner's epoch: a paused former owner cannot overwrite the new owner's. */
  async save(next: HelpdeskConfig): Promise<void> {
    await this.ctx().writeConfigBlock('helpdesk', next);
    this.current = next;
  }

  /** The configuration with its inbox, creating or finding the inbox first when activation could not. */
  async withInbox(signal: AbortSignal): Promise<HelpdeskConfig & { inboxId: number }> {
    const config = this.current!;
    if (config.inboxId !== undefined) return config as HelpdeskConfig & { inboxId: number };
    const secured = this.#withSecret(config);
    const inboxId = await ensureInbox(this.client(secured), secured.inboxName, this.#webhookUrl(secured), signal);
    const next = { ...secured, inboxId };
    await this.save(next);
    return next;
  }

  #withSecret(config: HelpdeskConfig): HelpdeskConfig {
    if (config.webhookSecretSealed) return config;
    return {
      ...config,
      webhookSecretSealed: this.deps.secrets.seal(generateToken(), SecretPurpose.HelpdeskWebhookSecret),
    };
  }

  #webhookUrl(config: HelpdeskConfig): string {
    const secret = this.deps.secrets.open(config.webhookSecretSealed!, SecretPurpose.HelpdeskWebhookSecret);
    return helpdeskWebhookUrl(this.deps.publicBaseUrl(), this.instanceId, secret);
  }

  client(config: HelpdeskConfig): ChatwootClient {
    const key = `${config.baseUrl}\n${config.accountId}\n${config.apiTokenSealed}`;
    if (this.#client?.key !== key) {
      const o = this.deps.options;
      const client = new ChatwootClient({
        baseUrl: config.baseUrl,
        accountId: config.accountId,
        apiToken: this.deps.secrets.open(config.apiTokenSealed, SecretPurpose.HelpdeskApiToken),
        timeoutMs: o.timeoutMs,
        retries: o.retries,
        allowPrivateUrls: this.deps.allowPrivateUrls,
        ...(this.deps.retryBaseMs !== undefined ? { retryBaseMs: this.deps.retryBaseMs } : {}),
      });
      this.#client = { key, client };
    }
    return this.#client.client;
  }

  async succeeded(): Promise<void> {
    this.#failures = 0;
    const c = this.current;
    if (c?.status === 'error') await this.save({ ...c, status: 'active' });
  }

  async failed(err: unknown): Promise<void> {
    this.#failures++;
    const c = this.current;
    if (!c) return;
    const lastError = reasonOf(err);
    const credentials = err instanceof ChatwootError && err.rejectsCredentials;
    const toError = c.status === 'active' && (credentials || this.#failures >= this.deps.options.errorAfter);
    if (toError) await this.save({ ...c, status: 'error', lastError });
    else if (c.lastError !== lastError) await this.save({ ...c, lastError });
  }

  /** POST /api/helpdesk/set: merge, check with Chatwoot (inbox created or reused), save. */
  async set(patch: HelpdeskPatch): Promise<{ config: HelpdeskConfig; warning?: string }> {
    const current = await this.stored();
    const merged = this.#withSecret(mergeHelpdeskPatch(current, patch));
    const paused = merged.status === 'paused';
    // A base URL stored with its trailing slash (before the slash was removed) names the same Chatwoot.
    const sameBase = current && withoutTrailingSlash(current.baseUrl) === withoutTrailingSlash(merged.baseUrl);
    const elsewhere = !current || !sameBase || current.accountId !== merged.accountId;
    let warning: string | undefined;
    try {
      merged.inboxId = await ensureInbox(this.client(merged), merged.inboxName, this.#webhookUrl(merged));
    } catch (err) {
      if (!(err instanceof ChatwootError) || !err.retryable) {
        throw new ValidationError(`Helpdesk settings refused: ${reasonOf(err)}`, { cause: err });
      }
      warning = reasonOf(err);
      merged.lastError = warning;
      if (!paused) merged.status = 'error';
      if (current && !elsewhere && merged.inboxName === current.inboxName) merged.inboxId = current.inboxId;
    }
    // Contacts and conversations of another installation or account mean nothing here.
    if (elsewhere) await this.state.clear(false);
    await this.save(merged);
    this.#failures = 0;
    return { config: merged, ...(warning ? { warning } : {}) };
  }

  /** A creation block (`pending`): activated like set, but a failure only sets `error` (spec section 3). */
  async activate(): Promise<{ config: HelpdeskConfig | null }> {
    const block = await this.stored();
    if (!block) return { config: null };
    if (block.status !== 'pending') return { config: block };
    if (!block.enabled) {
      await this.save({ ...block, status: 'paused' });
      return { config: this.current! };
    }
    const secured = this.#withSecret(block);
    try {
      const inboxId = await ensureInbox(this.client(secured), secured.inboxName, this.#webhookUrl(secured));
      await this.save({ ...secured, inboxId, status: 'active', lastError: undefined });
    } catch (err) {
      if (isOwnershipLoss(err)) throw err;
      await this.save({ ...secured, status: 'error', lastError: reasonOf(err) });
    }
    return { config: this.current! };
  }
}
