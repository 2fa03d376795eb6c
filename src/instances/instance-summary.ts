import { SECRET_MASK } from '../security/tokens.js';
import type { ConnectionState, InstanceConfig, InstanceRecord, WebhookRecord } from '../store/records.js';

/**
 * What the API shows of each block: never a secret. Whether a secret is set is shown as a flag; the
 * storage secret key appears masked as `s3.secretKey`, as the spec says.
 */

export function proxySummary(config: InstanceConfig) {
  const p = config.proxy;
  if (!p) return { enabled: false };
  return {
    enabled: p.enabled,
    host: p.host,
    port: p.port,
    protocol: p.protocol,
    user: p.user ?? '',
    hasPassword: !!p.passwordSealed,
  };
}

export function webhookSummary(webhook: WebhookRecord | undefined) {
  if (!webhook) return { enabled: false };
  return {
    enabled: webhook.enabled,
    label: webhook.label,
    url: webhook.url,
    byEvents: webhook.byEvents,
    events: webhook.events,
    base64: webhook.base64,
    hasAuthorization: !!webhook.authorizationSealed,
  };
}

export function websocketSummary(config: InstanceConfig) {
  const w = config.websocket;
  if (!w) return { enabled: false };
  return { enabled: w.enabled, events: w.events, base64: w.base64 };
}

export function helpdeskSummary(config: InstanceConfig) {
  const h = config.helpdesk;
  if (!h) return { enabled: false };
  return {
    enabled: h.enabled,
    status: h.status,
    ...(h.lastError ? { error: h.lastError } : {}),
    baseUrl: h.baseUrl.replace(/\/+$/, ''),
    accountId: h.accountId,
    inboxName: h.inboxName,
    inboxId: h.inboxId ?? null,
    signMessages: h.signMessages,
    ignoreGroups: h.ignoreGroups,
    startAsPending: h.startAsPending,
    reopenResolved: h.reopenResolved,
  };
}

export function chatbotSummary(config: InstanceConfig) {
  const c = config.chatbot;
  if (!c) return { enabled: false };
  return {
    enabled: c.enabled,
    status: 'pending' as const,
    url: c.url,
    triggerType: c.triggerType,
    triggerOperator: c.triggerOperator ?? null,
    triggerValue: c.triggerValue ?? null,
    expireMinutes: c.expireMinutes,
    typingDelayMs: c.typingDelayMs,
    stopBotFromMe: c.stopBotFromMe,
    debounceSeconds: c.debounceSeconds,
    ignoreGroups: c.ignoreGroups,
    label: c.label,
  };
}

/**
 * `status`: `ok` or `error` (then `error` holds a readable cause) as the last upload or check of this
 * configuration found it; `unchecked` until then (a status recorded for an earlier configuration no
 * longer counts).
 */
export function storageSummary(config: InstanceConfig) {
  const s = config.storage;
  if (!s) return { enabled: false };
  const status =
    config.storageStatus && config.storageStatus.revision === (s.revision ?? '') ? config.storageStatus : undefined;
  return {
    enabled: s.enabled,
    region: s.region,
    bucket: s.bucket,
    accessKey: s.accessKey,
    secretKey: s.secretKeySealed ? SECRET_MASK : '',
    endpoint: s.endpoint ?? null,
    pathPrefix: s.pathPrefix,
    status: status?.state ?? ('unchecked' as const),
    ...(status?.error ? { error: status.error } : {}),
    checkedAt: status?.checkedAt ?? null,
  };
}

/**
 * The hosted product's instance status: its four states (a QR waiting to be scanned is `connecting`).
 */
export function hostedStatus(state: ConnectionState): 'connected' | 'connecting' | 'disconnected' | 'loggedout' {
  return state === 'qr' ? 'connecting' : state;
}

/** An instance as GET /api/instance/list shows it (`token`: its TokenInstance, for the hosted product's clients). */
export function instanceView(instance: InstanceRecord, webhooks: WebhookRecord[], token: string | null) {
  const { config, connection } = instance;
  const connected = connection.state === 'connected';
  return {
    name: instance.name,
    token,
    status: hostedStatus(connection.state),
    createdAt: instance.createdAt,
    connection: {
      state: connection.state,
      numberJid: connection.numberJid ?? null,
      lastError: connection.lastError ?? null,
      // Presence as the instance last set it: online while connected with keepOnlineStatus.
      presenceStatus: connected ? (config.settings.keepOnlineStatus ? 'available' : 'unavailable') : 'unavailable',
      displayStatus: connected ? 'online' : connection.state === 'qr' ? 'connecting' : connection.state,
    },
    profile: {
      name: connection.profileName ?? null,
      pictureUrl: connection.profilePictureUrl ?? null,
      // Learnt when the number connects; null before the first connection.
      isBusiness: connection.isBusiness ?? null,
      businessName: connection.businessName ?? null,
    },
    settings: config.settings,
    proxy: proxySummary(config),
    webhook: webhookSummary(webhooks.find((w) => w.label === 'default')),
    webhooks: webhooks.length,
    websocket: websocketSummary(config),
    helpdesk: helpdeskSummary(config),
    chatwoot: helpdeskSummary(config),
    chatbot: chatbotSummary(config),
    s3: storageSummary(config),
  };
}
