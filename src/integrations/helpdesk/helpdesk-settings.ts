import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { checkUrlSyntax } from '../../security/url-policy.js';
import type { HelpdeskConfig } from '../../store/records.js';
import { describeIssue, isPlainObject } from '../../validation.js';
import type { HelpdeskPatch } from './helpdesk-calls.js';

/** The inbox name when neither the creation block nor the set body names one. */
export const DEFAULT_INBOX_NAME = 'Switchboard';

/** Where Chatwoot posts an inbox's events: the instance id, then the unguessable per-instance secret. */
export const WEBHOOK_PATH = '/api/helpdesk/webhook';

export function helpdeskWebhookUrl(publicBaseUrl: string, instanceId: string, secret: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${WEBHOOK_PATH}/${encodeURIComponent(instanceId)}/${secret}`;
}

const FIELDS = {
  baseUrl: z.string().trim().min(1).max(2048),
  accountId: z.union([
    z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    z
      .string()
      .trim()
      .regex(/^[1-9]\d{0,15}$/, 'expected a positive integer'),
  ]),
  apiToken: z.string().trim().min(1).max(1024),
  inboxName: z.string().trim().min(1).max(256),
  signMessages: z.boolean(),
  ignoreGroups: z.boolean(),
  startAsPending: z.boolean(),
  reopenResolved: z.boolean(),
  paused: z.boolean(),
  enabled: z.boolean(),
} as const;
type Field = keyof typeof FIELDS;

/** The body of set: every field optional (the creation body's `helpdesk…`/`chatwoot…` names are accepted too). */
export const helpdeskPatchSchema = z.strictObject(
  Object.fromEntries(Object.entries(FIELDS).map(([k, v]) => [k, v.optional()])) as {
    [K in Field]: z.ZodOptional<(typeof FIELDS)[K]>;
  },
);

/** `helpdeskBaseUrl` / `chatwootBaseUrl` (the creation body's spellings) → `baseUrl`. */
function canonical(key: string): string {
  const m = /^(?:helpdesk|chatwoot)([A-Z]\w*)$/.exec(key);
  const short = m ? m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1) : key;
  return short in FIELDS ? short : key;
}

/** A top-level name `set` maps to one of its fields (`helpdeskBaseUrl`, `chatwootBaseUrl`). */
export function isHelpdeskAlias(key: string): boolean {
  return canonical(key) in FIELDS;
}

const invalid = (detail: string) => new ValidationError(`Invalid request body: ${detail}`);

/** Chatwoot's base URL as the hosted product keeps it: its trailing `/` removed (URL parsing adds one to a bare host). */
export const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The body of POST /api/helpdesk/set: any of the fields, under their short names or the creation body's
 * (`helpdesk…`, `chatwoot…`); `null` counts as absent; two spellings of one field → 400. `enabled: false`
 * is `paused: true`. The URL is checked by the URL policy and the token sealed before it leaves the edge.
 */
export function parseHelpdeskPatch(raw: unknown, o: { secrets: SecretBox; allowPrivateUrls: boolean }): HelpdeskPatch {
  if (!isPlainObject(raw)) throw invalid('expected a JSON object');
  const body: Record<string, unknown> = {};
  const spelled: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null) continue;
    const name = canonical(key);
    if (spelled[name] !== undefined) throw invalid(`'${spelled[name]}' and '${key}' are the same field; send only one`);
    spelled[name] = key;
    body[name] = value;
  }
  const parsed = helpdeskPatchSchema.safeParse(body);
  if (!parsed.success) throw invalid(describeIssue(parsed.error));
  const b = parsed.data;
  if (b.enabled !== undefined && b.paused !== undefined) throw invalid("send only one of 'enabled' and 'paused'");
  let baseUrl: string | undefined;
  if (b.baseUrl !== undefined) {
    const checked = checkUrlSyntax(b.baseUrl, { allowPrivate: o.allowPrivateUrls });
    if ('reason' in checked) throw invalid(`baseUrl: ${checked.reason}`);
    baseUrl = withoutTrailingSlash(checked.url.toString());
  }
  const paused = b.paused ?? (b.enabled === undefined ? undefined : !b.enabled);
  return {
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(b.accountId !== undefined ? { accountId: Number(b.accountId) } : {}),
    ...(b.apiToken !== undefined ? { apiTokenSealed: o.secrets.seal(b.apiToken, SecretPurpose.HelpdeskApiToken) } : {}),
    ...(b.inboxName !== undefined ? { inboxName: b.inboxName } : {}),
    ...(b.signMessages !== undefined ? { signMessages: b.signMessages } : {}),
    ...(b.ignoreGroups !== undefined ? { ignoreGroups: b.ignoreGroups } : {}),
    ...(b.startAsPending !== undefined ? { startAsPending: b.startAsPending } : {}),
    ...(b.reopenResolved !== undefined ? { reopenResolved: b.reopenResolved } : {}),
    ...(paused !== undefined ? { paused } : {}),
  };
}

/**
 * The configuration a set makes of the stored one (if any) and the patch: unsent fields keep their
 * values; a new integration needs baseUrl, accountId and apiToken. Unless `paused` is sent, a paused
 * integration stays paused, and anything else (a creation block sent disabled, one in error) is
 * activated. The inbox is looked up again (`inboxId` unset) and `lastError` cleared.
 * @throws ValidationError naming the first missing field
 */
export function mergeHelpdeskPatch(current: HelpdeskConfig | undefined, patch: HelpdeskPatch): HelpdeskConfig {
  const paused = patch.paused ?? (current?.enabled === true && current.status === 'paused');
  const merged: HelpdeskConfig = {
    enabled: true,
    baseUrl: patch.baseUrl ?? withoutTrailingSlash(current?.baseUrl ?? ''),
    accountId: patch.accountId ?? current?.accountId ?? 0,
    apiTokenSealed: patch.apiTokenSealed ?? current?.apiTokenSealed ?? '',
    inboxName: patch.inboxName ?? current?.inboxName ?? DEFAULT_INBOX_NAME,
    signMessages: patch.signMessages ?? current?.signMessages ?? false,
    ignoreGroups: patch.ignoreGroups ?? current?.ignoreGroups ?? false,
    startAsPending: patch.startAsPending ?? current?.startAsPending ?? false,
    reopenResolved: patch.reopenResolved ?? current?.reopenResolved ?? false,
    inboxId: undefined,
    status: paused ? 'paused' : 'active',
    lastError: undefined,
    ...(current?.webhookSecretSealed ? { webhookSecretSealed: current.webhookSecretSealed } : {}),
  };
  const missing = !merged.baseUrl
    ? 'baseUrl'
    : !merged.accountId
      ? 'accountId'
      : !merged.apiTokenSealed
        ? 'apiToken'
        : undefined;
  if (missing) throw invalid(`${missing} is required`);
  return merged;
}

/**
 * The integration as the set and list endpoints show it. Only the list (the spec's read endpoint) adds
 * the API token in plaintext and the inbox's webhook URL, which carries the webhook secret.
 */
export function helpdeskView(config: HelpdeskConfig, secrets?: { apiToken: string; webhookUrl: string | null }) {
  return {
    enabled: config.enabled,
    status: config.status,
    last_error: config.lastError ?? null,
    baseUrl: withoutTrailingSlash(config.baseUrl),
    accountId: config.accountId,
    inboxName: config.inboxName,
    inboxId: config.inboxId ?? null,
    signMessages: config.signMessages,
    ignoreGroups: config.ignoreGroups,
    startAsPending: config.startAsPending,
    reopenResolved: config.reopenResolved,
    ...(secrets ? { apiToken: secrets.apiToken, webhookUrl: secrets.webhookUrl } : {}),
  };
}
