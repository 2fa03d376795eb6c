import { randomUUID } from 'node:crypto';
import { newWebhookSecret } from '../events/webhooks/webhook-signature.js';
import type { Logger } from 'pino';
import type { CredentialNews } from '../events/credential-news.js';
import { InternalError, NotFoundError, StoreUnavailableError, ValidationError, MODULE_UNAVAILABLE } from '../errors.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { generateToken, hashToken } from '../security/tokens.js';
import { DEFAULT_SETTINGS } from '../store/records.js';
import type {
  AccountRecord,
  ChatbotBlock,
  HelpdeskConfig,
  InstanceRecord,
  InstanceSettings,
  WebhookRecord,
} from '../store/records.js';
import type { Store } from '../store/store.js';
import { describeIssue, isPlainObject } from '../validation.js';
import { parseCreationBody } from './creation-body.js';
import {
  chatbotBlock,
  helpdeskBlock,
  checkProxyAddress,
  proxyBlock,
  storageBlock,
  webhookBlock,
  websocketBlock,
} from './instance-blocks.js';
import type { BlockResult } from './instance-blocks.js';
import {
  chatbotSummary,
  helpdeskSummary,
  instanceView,
  proxySummary,
  storageSummary,
  webhookSummary,
  websocketSummary,
} from './instance-summary.js';
import { settingsSchema } from './settings-schema.js';

/** The chatbot module's part in creating and listing instances (absent when CHATBOT_ENABLED is off). */
export interface ChatbotBlockHandler {
  /** Creates the creation block's bot; the `chatbot` summary (`status: active`, or `error` with `error`). */
  createFromBlock(instance: InstanceRecord, block: ChatbotBlock): Promise<Record<string, unknown>>;
  /** What the instance list shows of the instance's chatbot integration. */
  summary(instanceId: string): Promise<Record<string, unknown>>;
}

export interface InstanceServiceOptions {
  store: Store;
  secrets: SecretBox;
  allowPrivateUrls: boolean;
  logger: Logger;
  chatbot?: ChatbotBlockHandler;
  /** The helpdesk module; undefined when it is off (a helpdesk block is then ignored: `enabled: false`). */
  helpdesk?: HelpdeskActivation;
  /** Where a token rotation is announced, so that every node closes the sockets of the old token at once. */
  credentials?: CredentialNews;
}

/** Activates a created instance's helpdesk block; returns the block as it then is. */
export interface HelpdeskActivation {
  activate(instance: InstanceRecord): Promise<HelpdeskConfig | undefined>;
}

/** The chatbot block of a creation when the module is disabled on the server. */
const CHATBOT_UNAVAILABLE = { enabled: false, status: 'error' as const, error: MODULE_UNAVAILABLE };

const valueOf = <T>(r: BlockResult<T>): T | undefined => (r && 'value' in r ? r.value : undefined);

/** Summary of a block that failed: `enabled: false` plus the cause (and `status: error` for integrations). */
const failed = (r: BlockResult<unknown>, integration = false) =>
  r && 'error' in r
    ? { enabled: false, ...(integration ? { status: 'error' as const } : {}), error: r.error }
    : undefined;

/** Accounts' instances: creation with its blocks, listing, deletion and settings. */
export class InstanceService {
  constructor(private readonly options: InstanceServiceOptions) {}

  async create(account: AccountRecord, rawBody: unknown) {
    const body = parseCreationBody(rawBody);
    const ctx = { secrets: this.options.secrets, allowPrivateUrls: this.options.allowPrivateUrls };
    const blocks = {
      proxy: await checkProxyAddress(proxyBlock(body, ctx), ctx),
      webhook: webhookBlock(body, ctx),
      websocket: websocketBlock(body),
      helpdesk: this.options.helpdesk ? helpdeskBlock(body, ctx) : undefined,
      chatbot: chatbotBlock(body, ctx),
      storage: storageBlock(body, ctx),
    };
    for (const [name, result] of Object.entries(blocks)) {
      if (result && 'error' in result) {
        this.options.logger.warn(
          { account: account.name, instance: body.name, block: name, reason: result.error },
          'creation block skipped',
        );
      }
    }

    const token = body.token ?? generateToken();
    const now = new Date().toISOString();
    const instance: InstanceRecord = {
      id: randomUUID(),
      accountId: account.id,
      name: body.name,
      tokenHash: hashToken(token),
      tokenSealed: this.options.secrets.seal(token, SecretPurpose.InstanceToken),
      ownerEpoch: 0,
      config: {
        settings: { ...DEFAULT_SETTINGS, ...body.settingsPatch },
        proxy: valueOf(blocks.proxy),
        websocket: valueOf(blocks.websocket),
        helpdesk: valueOf(blocks.helpdesk),
        // With the module on, the block becomes a bot (the bot store holds it); without, it is kept as given.
        chatbot: this.options.chatbot ? undefined : valueOf(blocks.chatbot),
        storage: valueOf(blocks.storage),
      },
      connection: { state: 'disconnected', numberJid: undefined, updatedAt: now },
      createdAt: now,
    };
    const hook = valueOf(blocks.webhook);
    // The webhook's signing secret is shown in this answer only.
    const hookSecret = hook ? newWebhookSecret(this.options.secrets) : undefined;
    const webhooks: WebhookRecord[] = hook
      ? [
          {
            instanceId: instance.id,
            label: 'default',
            ...hook,
            secretSealed: hookSecret!.sealed,
            createdAt: now,
            updatedAt: now,
          },
        ]
      : [];
    await this.options.store.instances.create(instance, webhooks, account.instanceQuota);
    this.options.logger.info(
      { account: account.name, instance: instance.name, instanceId: instance.id },
      'instance created',
    );

    const { config } = instance;
    const helpdesk = failed(blocks.helpdesk, true) ?? (await this.#activateHelpdesk(instance));
    return {
      instance: {
        id: instance.id,
        name: instance.name,
        token,
        createdAt: now,
        connection: { state: instance.connection.state, numberJid: null },
      },
      proxy: failed(blocks.proxy) ?? proxySummary(config),
      webhook:
        failed(blocks.webhook) ??
        (hookSecret ? { ...webhookSummary(webhooks[0]), secret: hookSecret.secret } : webhookSummary(webhooks[0])),
      websocket: failed(blocks.websocket) ?? websocketSummary(config),
      helpdesk,
      // The same block under the hosted product's name.
      chatwoot: helpdesk,
      chatbot: failed(blocks.chatbot, true) ?? (await this.#chatbotBlock(instance, valueOf(blocks.chatbot))),
      settings: config.settings,
      s3: failed(blocks.storage) ?? storageSummary(config),
    };
  }

  /** The creation block once the module has activated it (inbox created: `active`, or `error`). */
  async #activateHelpdesk(instance: InstanceRecord) {
    if (!this.options.helpdesk || !instance.config.helpdesk) return helpdeskSummary(instance.config);
    return helpdeskSummary({ ...instance.config, helpdesk: await this.options.helpdesk.activate(instance) });
  }

  async #chatbotBlock(instance: InstanceRecord, block: ChatbotBlock | undefined) {
    if (!block?.enabled) return chatbotSummary(instance.config);
    if (!this.options.chatbot) return CHATBOT_UNAVAILABLE;
    return this.options.chatbot.createFromBlock(instance, block);
  }

  /**
   * The account's instances, or only `own` for a TokenInstance (which ignores the filter, as the hosted
   * product does); `names` filters. One unknown name alone → 404; unknown names among several are skipped.
   * Each carries its TokenInstance, opened from the store's sealed copy, and its `status`.
   */
  async list(account: AccountRecord, names: string[] | undefined, own?: InstanceRecord) {
    let instances: InstanceRecord[];
    if (own) instances = [own];
    else instances = await this.options.store.instances.listByAccount(account.id, names);
    if (!own && names?.length === 1 && instances.length === 0) throw new NotFoundError('Instance not found');
    const chatbot = this.options.chatbot;
    return Promise.all(
      instances.map(async (i) => {
        const view = instanceView(i, await this.options.store.webhooks.list(i.id), this.#tokenOf(i));
        return chatbot ? { ...view, chatbot: await chatbot.summary(i.id) } : view;
      }),
    );
  }

  /** The instance's token from its sealed copy (null if it cannot be opened, say after a key change). */
  #tokenOf(instance: InstanceRecord): string | null {
    try {
      return this.options.secrets.open(instance.tokenSealed, SecretPurpose.InstanceToken);
    } catch (err) {
      this.options.logger.warn({ err, instance: instance.name }, 'cannot open the sealed instance token');
      return null;
    }
  }

  async delete(instance: InstanceRecord): Promise<void> {
    await this.options.store.instances.delete(instance.id);
    this.options.logger.info({ instance: instance.name, instanceId: instance.id }, 'instance deleted');
  }

  /** Issues a new TokenInstance (shown once); the old one stops working at once, WebSockets included. */
  async rotateToken(instance: InstanceRecord): Promise<string> {
    const token = generateToken();
    const sealed = this.options.secrets.seal(token, SecretPurpose.InstanceToken);
    if (!(await this.options.store.instances.replaceToken(instance.id, hashToken(token), sealed))) {
      throw new NotFoundError('Instance not found');
    }
    await this.options.credentials?.publish({ instanceId: instance.id });
    this.options.logger.info({ instance: instance.name, instanceId: instance.id }, 'instance token rotated');
    return token;
  }

  /**
   * Partial update of the seven settings. The spec fixes the messages: `Invalid request body`, `At least
   * one setting must be provided`, and `Failed to update settings configuration` when the store fails.
   */
  async updateSettings(instance: InstanceRecord, rawBody: unknown): Promise<InstanceSettings> {
    if (!isPlainObject(rawBody)) throw new ValidationError('Invalid request body');
    const parsed = settingsSchema.safeParse(rawBody);
    if (!parsed.success) {
      this.options.logger.debug(
        { instance: instance.name, reason: describeIssue(parsed.error) },
        'settings body refused',
      );
      throw new ValidationError('Invalid request body');
    }
    const patch = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
    if (Object.keys(patch).length === 0) throw new ValidationError('At least one setting must be provided');
    let settings: InstanceSettings | undefined;
    try {
      settings = await this.options.store.instances.updateSettings(instance.id, patch);
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      this.options.logger.error({ err, instance: instance.name }, 'settings update failed');
      throw new InternalError('Failed to update settings configuration', { cause: err });
    }
    if (!settings) throw new InternalError('Failed to update settings configuration');
    return settings;
  }
}
