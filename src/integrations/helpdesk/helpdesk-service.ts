import type { Logger } from 'pino';
import type { ActorCaller, CallingRequest } from '../../cluster/actor-caller.js';
import { NotFoundError } from '../../errors.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { safeEqual } from '../../security/tokens.js';
import type { HelpdeskConfig, InstanceRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { helpdeskView, helpdeskWebhookUrl, parseHelpdeskPatch } from './helpdesk-settings.js';
import { parseChatwootWebhook } from './webhook-payload.js';

export interface HelpdeskServiceOptions {
  store: Store;
  secrets: SecretBox;
  /** Reaches the instance's actor: every Chatwoot call runs there. */
  actors: ActorCaller;
  allowPrivateUrls: boolean;
  publicBaseUrl(): string;
  log: Logger;
}

export const INTEGRATION_NOT_FOUND = 'Helpdesk integration not found';

const WEBHOOK_REFUSED = 'Not found';

/**
 * The edge's side of the helpdesk integration, on any node: validates requests and hands them to the
 * instance's actor (set, delete, creation blocks, Chatwoot webhooks); reads are served from the store.
 */
export class HelpdeskService {
  constructor(private readonly options: HelpdeskServiceOptions) {}

  /** The calls of one request carry its id to the owner; without one, the node's caller. */
  #actors(request: CallingRequest | undefined): ActorCaller {
    return request ? this.options.actors.for(request) : this.options.actors;
  }

  /** Activates a creation block; the block as it then is (a failed call leaves it as stored). */
  async activate(instance: InstanceRecord, request?: CallingRequest): Promise<HelpdeskConfig | undefined> {
    try {
      const { config } = await this.#actors(request).call(instance.id, 'helpdesk.activate', {});
      return config ?? undefined;
    } catch (err) {
      this.options.log.warn(
        { err, instance: instance.name },
        'helpdesk block not activated at creation; its actor activates it later',
      );
      return (await this.options.store.instances.findById(instance.id))?.config.helpdesk;
    }
  }

  async set(instance: InstanceRecord, body: unknown, request?: CallingRequest) {
    const patch = parseHelpdeskPatch(body, {
      secrets: this.options.secrets,
      allowPrivateUrls: this.options.allowPrivateUrls,
    });
    const { config, warning } = await this.#actors(request).call(instance.id, 'helpdesk.set', patch);
    return { view: helpdeskView(config), warning };
  }

  /** The integration with its token in plaintext (the spec's read endpoint). @throws NotFoundError */
  async list(instance: InstanceRecord) {
    const config = instance.config.helpdesk;
    if (!config) throw new NotFoundError(INTEGRATION_NOT_FOUND);
    const apiToken = config.apiTokenSealed
      ? this.options.secrets.open(config.apiTokenSealed, SecretPurpose.HelpdeskApiToken)
      : '';
    const secret = config.webhookSecretSealed
      ? this.options.secrets.open(config.webhookSecretSealed, SecretPurpose.HelpdeskWebhookSecret)
      : undefined;
    return helpdeskView(config, {
      apiToken,
      webhookUrl: secret ? helpdeskWebhookUrl(this.options.publicBaseUrl(), instance.id, secret) : null,
    });
  }

  /** @throws NotFoundError when there is no integration */
  async remove(instance: InstanceRecord, request?: CallingRequest): Promise<{ inboxId: number | null }> {
    if (!instance.config.helpdesk) throw new NotFoundError(INTEGRATION_NOT_FOUND);
    const { removed, inboxId } = await this.#actors(request).call(instance.id, 'helpdesk.delete', {});
    if (!removed) throw new NotFoundError(INTEGRATION_NOT_FOUND);
    return { inboxId };
  }

  /**
   * A Chatwoot webhook: the path's secret must be the instance's (compared in constant time; any mismatch
   * is a plain 404). What concerns WhatsApp goes to the owner; the rest is acknowledged and dropped.
   */
  async webhook(
    instanceId: string,
    secret: string,
    body: unknown,
    request?: CallingRequest,
  ): Promise<{ accepted: boolean }> {
    const instance = /^[\w-]{1,64}$/.test(instanceId)
      ? await this.options.store.instances.findById(instanceId)
      : undefined;
    const sealed = instance?.config.helpdesk?.webhookSecretSealed;
    if (!sealed || !safeEqual(secret, this.options.secrets.open(sealed, SecretPurpose.HelpdeskWebhookSecret))) {
      throw new NotFoundError(WEBHOOK_REFUSED);
    }
    const inbound = parseChatwootWebhook(body);
    if (!inbound) return { accepted: false };
    return this.#actors(request).call(instanceId, 'helpdesk.inbound', inbound);
  }
}
