import { randomUUID } from 'node:crypto';
import { isEventName } from '../events/event-names.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { checkHost, checkUrlSyntax, isPublicHost } from '../security/url-policy.js';
import type { Resolver } from '../security/url-policy.js';
import type {
  ChatbotBlock,
  ChatbotTriggerOperator,
  HelpdeskConfig,
  ProxyConfig,
  ProxyProtocol,
  StorageConfig,
  WebsocketConfig,
} from '../store/records.js';
import type { CreationBody } from './creation-body.js';
import { checkTriggerPattern } from './trigger-pattern.js';
import { NamedError } from '../errors.js';

/**
 * Turns each optional block of the creation body into stored configuration. A block whose content is
 * wrong does not abort creation: it yields `{ error }` and the instance is created without it.
 */

export type BlockResult<T> = { value: T } | { error: string } | undefined;

class BlockError extends NamedError {}

function fail(message: string): never {
  throw new BlockError(message);
}

function block<T>(present: boolean, build: () => T): BlockResult<T> {
  if (!present) return undefined;
  try {
    return { value: build() };
  } catch (err) {
    if (err instanceof BlockError) return { error: err.message };
    throw err;
  }
}

const has = (body: object, prefix: string) => Object.keys(body).some((k) => k.startsWith(prefix));

/** The creation body's fields of the proxy block (also the body of POST /api/instance/proxy). */
export type ProxyFields = Pick<
  CreationBody,
  'proxyEnabled' | 'proxyHost' | 'proxyPort' | 'proxyProtocol' | 'proxyUser' | 'proxyPassword'
>;
/** The creation body's fields of the storage block (also the body of POST /api/instance/s3). */
export type StorageFields = Pick<
  CreationBody,
  's3Enabled' | 's3Region' | 's3Bucket' | 's3AccessKey' | 's3SecretKey' | 's3Endpoint' | 's3PathPrefix'
>;

export interface BlockContext {
  secrets: SecretBox;
  allowPrivateUrls: boolean;
  /** How `checkProxyAddress` resolves the proxy's host name. @default the system resolver */
  resolve?: Resolver;
}

const PROXY_INTERNAL = 'proxyHost: proxies on internal networks are not allowed';

function publicUrl(raw: string | undefined, field: string, ctx: BlockContext): string {
  if (!raw?.trim()) fail(`${field} is required`);
  const checked = checkUrlSyntax(raw.trim(), { allowPrivate: ctx.allowPrivateUrls });
  if ('reason' in checked) fail(`${field}: ${checked.reason}`);
  return checked.url.toString();
}

function events(list: string[] | undefined, field: string): string[] {
  const names = [...new Set((list ?? []).map((e) => e.trim()).filter(Boolean))];
  const unknown = names.find((e) => !isEventName(e));
  if (unknown !== undefined) fail(`${field}: unknown event '${unknown}'`);
  return names;
}

const PROXY_PROTOCOLS: readonly ProxyProtocol[] = ['http', 'https', 'socks5'];
const HOST =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$|^\[?[0-9A-Fa-f:.]+\]?$/;

/**
 * The proxy block. With `update` (POST /api/instance/proxy), fields left out keep the current values and
 * the password is kept unless sent (an empty one removes it).
 */
export function proxyBlock(
  body: ProxyFields,
  ctx: BlockContext,
  update?: { current: ProxyConfig | undefined },
): BlockResult<ProxyConfig> {
  const current = update?.current;
  return block(update !== undefined || has(body, 'proxy'), () => {
    const enabled = body.proxyEnabled ?? current?.enabled ?? false;
    const host = (body.proxyHost ?? current?.host ?? '').trim();
    const port = (body.proxyPort ?? current?.port ?? '').trim();
    const protocol = ((body.proxyProtocol ?? current?.protocol ?? '').trim().toLowerCase() || 'http') as ProxyProtocol;
    if (enabled && !host) fail('proxyHost is required when the proxy is enabled');
    if (host && !HOST.test(host)) fail(`proxyHost is not a valid host name or IP address`);
    // The driver dials the proxy: a tenant must not make the service open connections into the operator's network.
    if (host && !ctx.allowPrivateUrls && !isPublicHost(host)) fail(PROXY_INTERNAL);
    if (enabled && !port) fail('proxyPort is required when the proxy is enabled');
    if (port && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
      fail('proxyPort must be a port number from 1 to 65535');
    }
    if (!PROXY_PROTOCOLS.includes(protocol)) fail(`proxyProtocol must be one of: ${PROXY_PROTOCOLS.join(', ')}`);
    const password = body.proxyPassword;
    return {
      enabled,
      host,
      port,
      protocol,
      user: body.proxyUser !== undefined ? body.proxyUser || undefined : current?.user,
      passwordSealed:
        password !== undefined
          ? password
            ? ctx.secrets.seal(password, SecretPurpose.ProxyPassword)
            : undefined
          : current?.passwordSealed,
    };
  });
}

/**
 * The proxy block's host name checked against the address policy: a name that resolves to an internal
 * address is refused. A name that does not resolve now is kept (the driver checks again, and pins the
 * address, every time it connects).
 */
export async function checkProxyAddress(
  result: BlockResult<ProxyConfig>,
  ctx: BlockContext,
): Promise<BlockResult<ProxyConfig>> {
  if (!result || 'error' in result || !result.value.host || ctx.allowPrivateUrls) return result;
  const checked = await checkHost(result.value.host, { allowPrivate: false }, ctx.resolve);
  if ('reason' in checked && checked.reason.startsWith('URLs pointing')) return { error: PROXY_INTERNAL };
  return result;
}

export interface DefaultWebhook {
  enabled: boolean;
  url: string;
  authorizationSealed: string | undefined;
  byEvents: boolean;
  events: string[];
  base64: boolean;
}

export function webhookBlock(body: CreationBody, ctx: BlockContext): BlockResult<DefaultWebhook> {
  return block(has(body, 'webhook'), () => {
    const enabled = body.webhookEnabled ?? false;
    const url = enabled || body.webhookURL ? publicUrl(body.webhookURL, 'webhookURL', ctx) : '';
    return {
      enabled,
      url,
      authorizationSealed: body.webhookAuthorization
        ? ctx.secrets.seal(body.webhookAuthorization, SecretPurpose.WebhookAuthorization)
        : undefined,
      byEvents: body.webhookByEvents ?? false,
      events: events(body.webhookEvents, 'webhookEvents'),
      base64: body.webhookBase64 ?? false,
    };
  });
}

export function websocketBlock(body: CreationBody): BlockResult<WebsocketConfig> {
  return block(has(body, 'websocket'), () => ({
    enabled: body.websocketEnabled ?? false,
    events: events(body.websocketEvents, 'websocketEvents'),
    base64: body.websocketBase64 ?? false,
  }));
}

export function helpdeskBlock(body: CreationBody, ctx: BlockContext): BlockResult<HelpdeskConfig> {
  return block(has(body, 'helpdesk'), () => {
    const enabled = body.helpdeskEnabled ?? false;
    // Without its trailing slash, as POST /api/chatwoot/set keeps it (the hosted product's form).
    const baseUrl =
      enabled || body.helpdeskBaseUrl
        ? publicUrl(body.helpdeskBaseUrl, 'helpdeskBaseUrl', ctx).replace(/\/+$/, '')
        : '';
    const rawId = body.helpdeskAccountId;
    const accountId = typeof rawId === 'string' ? Number(rawId.trim()) : (rawId ?? 0);
    if (enabled && !(Number.isSafeInteger(accountId) && accountId > 0)) {
      fail('helpdeskAccountId is required and must be a positive integer');
    }
    if (enabled && !body.helpdeskApiToken?.trim()) fail('helpdeskApiToken is required when the helpdesk is enabled');
    return {
      enabled,
      baseUrl,
      accountId,
      apiTokenSealed: body.helpdeskApiToken
        ? ctx.secrets.seal(body.helpdeskApiToken, SecretPurpose.HelpdeskApiToken)
        : '',
      inboxName: body.helpdeskInboxName?.trim() || 'Switchboard',
      signMessages: body.helpdeskSignMessages ?? false,
      ignoreGroups: body.helpdeskIgnoreGroups ?? false,
      startAsPending: body.helpdeskStartAsPending ?? false,
      reopenResolved: body.helpdeskReopenResolved ?? false,
      inboxId: undefined,
      status: 'pending',
      lastError: undefined,
    };
  });
}

const OPERATORS: readonly ChatbotTriggerOperator[] = ['contains', 'equals', 'startsWith', 'endsWith', 'regex'];

export function chatbotBlock(body: CreationBody, ctx: BlockContext): BlockResult<ChatbotBlock> {
  return block(has(body, 'chatbot'), () => {
    const enabled = body.chatbotEnabled ?? false;
    const url = enabled || body.chatbotUrl ? publicUrl(body.chatbotUrl, 'chatbotUrl', ctx) : '';
    const triggerType = body.chatbotTriggerType?.trim() || (enabled ? undefined : 'all');
    if (triggerType !== 'all' && triggerType !== 'keyword') fail("chatbotTriggerType must be 'all' or 'keyword'");
    let triggerOperator: ChatbotTriggerOperator | undefined;
    let triggerValue: string | undefined;
    if (triggerType === 'keyword') {
      triggerOperator = body.chatbotTriggerOperator?.trim() as ChatbotTriggerOperator | undefined;
      if (!triggerOperator || !OPERATORS.includes(triggerOperator)) {
        fail(`chatbotTriggerOperator must be one of: ${OPERATORS.join(', ')}`);
      }
      triggerValue = body.chatbotTriggerValue;
      if (!triggerValue) fail('chatbotTriggerValue is required for keyword triggers');
      if (triggerOperator === 'regex') {
        const problem = checkTriggerPattern(triggerValue);
        if (problem) fail(`chatbotTriggerValue: ${problem}`);
      }
    }
    return {
      enabled,
      url,
      triggerType,
      triggerOperator,
      triggerValue,
      expireMinutes: body.chatbotExpireMinutes ?? 0,
      expireMessage: body.chatbotExpireMessage ?? '',
      keywordFinish: body.chatbotKeywordFinish ?? '',
      finishMessage: body.chatbotFinishMessage ?? '',
      typingDelayMs: body.chatbotTypingDelayMs ?? 0,
      stopBotFromMe: body.chatbotStopBotFromMe ?? false,
      debounceSeconds: body.chatbotDebounceSeconds ?? 0,
      ignoreGroups: body.chatbotIgnoreGroups ?? true,
      label: body.chatbotLabel ?? '',
    };
  });
}

/**
 * The storage block. With `update` (POST /api/instance/s3), fields left out keep the current values and
 * the secret key is kept unless sent. Every result gets a new `revision`, which the storage status names.
 */
export function storageBlock(
  body: StorageFields,
  ctx: BlockContext,
  update?: { current: StorageConfig | undefined },
): BlockResult<StorageConfig> {
  const current = update?.current;
  return block(update !== undefined || has(body, 's3'), () => {
    const enabled = body.s3Enabled ?? current?.enabled ?? false;
    const bucket = (body.s3Bucket ?? current?.bucket ?? '').trim();
    if (enabled && !bucket) fail('s3Bucket is required when storage is enabled');
    if (bucket && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) fail('s3Bucket is not a valid bucket name');
    const accessKey = (body.s3AccessKey ?? current?.accessKey ?? '').trim();
    if (enabled && !accessKey) fail('s3AccessKey is required when storage is enabled');
    const secret = body.s3SecretKey;
    const secretKeySealed =
      secret !== undefined
        ? secret
          ? ctx.secrets.seal(secret, SecretPurpose.StorageSecretKey)
          : ''
        : (current?.secretKeySealed ?? '');
    if (enabled && !secretKeySealed) fail('s3SecretKey is required when storage is enabled');
    const region = body.s3Region !== undefined ? body.s3Region.trim() || 'us-east-1' : (current?.region ?? 'us-east-1');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(region)) fail('s3Region is not a valid region name');
    const endpoint =
      body.s3Endpoint !== undefined
        ? body.s3Endpoint.trim()
          ? publicUrl(body.s3Endpoint, 's3Endpoint', ctx)
          : undefined
        : current?.endpoint;
    return {
      enabled,
      region,
      bucket,
      accessKey,
      secretKeySealed,
      endpoint,
      pathPrefix: body.s3PathPrefix !== undefined ? body.s3PathPrefix.replace(/^\/+/, '') : (current?.pathPrefix ?? ''),
      revision: randomUUID(),
    };
  });
}
