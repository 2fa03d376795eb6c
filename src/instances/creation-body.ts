import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { describeIssue, isPlainObject } from '../validation.js';
import { settingsSchema } from './settings-schema.js';

/**
 * The body of POST /api/instance/new. Shape errors (wrong JSON types, unknown fields, both spellings of
 * one field) are refused with 400 before anything is created; what a block *means* (a missing URL, a bad
 * port) is checked later by instance-blocks.ts, log-and-continue as the spec says.
 */

const text = (max = 4096) => z.string().max(max);
const flag = z.boolean();
const count = z.number().int().min(0).max(1_000_000_000);
const eventList = z.array(text(64)).max(64);

const fields = {
  name: z.string().describe('Instance name (required): 1 to 64 letters, digits, dots, dashes or underscores'),
  token: z.string().describe('The TokenInstance to use (8 to 256 printable characters); generated when absent'),
  settings: z.unknown(),
  // Proxy block.
  proxyEnabled: flag,
  proxyHost: text(253),
  proxyPort: z.union([text(5), z.number().int()]).transform(String),
  proxyProtocol: text(16),
  proxyUser: text(256),
  proxyPassword: text(1024),
  // Webhook block (creates the webhook labelled `default`).
  webhookEnabled: flag,
  webhookURL: text(2048),
  webhookAuthorization: text(4096),
  webhookByEvents: flag,
  webhookEvents: eventList,
  webhookBase64: flag,
  // WebSocket block.
  websocketEnabled: flag,
  websocketEvents: eventList,
  websocketBase64: flag,
  // Helpdesk block.
  helpdeskEnabled: flag,
  helpdeskBaseUrl: text(2048),
  helpdeskAccountId: z.union([z.number().int(), text(20)]),
  helpdeskApiToken: text(1024),
  helpdeskInboxName: text(256),
  helpdeskSignMessages: flag,
  helpdeskIgnoreGroups: flag,
  helpdeskStartAsPending: flag,
  helpdeskReopenResolved: flag,
  // Chatbot block (the first bot).
  chatbotEnabled: flag,
  chatbotUrl: text(2048),
  chatbotTriggerType: text(16),
  chatbotTriggerOperator: text(16),
  chatbotTriggerValue: text(1024),
  chatbotExpireMinutes: count,
  chatbotExpireMessage: text(),
  chatbotKeywordFinish: text(256),
  chatbotFinishMessage: text(),
  chatbotTypingDelayMs: count,
  chatbotStopBotFromMe: flag,
  chatbotDebounceSeconds: count,
  chatbotIgnoreGroups: flag,
  chatbotLabel: text(256),
  // Storage block.
  s3Enabled: flag,
  s3Region: text(64),
  s3Bucket: text(255),
  s3AccessKey: text(256),
  s3SecretKey: text(1024),
  s3Endpoint: text(2048),
  s3PathPrefix: text(1024),
} as const;

const SETTINGS_KEYS = Object.keys(settingsSchema.shape);

const bodySchema = z.strictObject(
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  },
);

/**
 * The body as the API documents it: every field above, the settings nested. `parseCreationBody` also
 * takes the settings flat at the top level and the hosted product's aliases (CREATION_ALIASES).
 */
export const creationBodySchema = bodySchema.extend({ settings: settingsSchema.optional() });

export type CreationBody = Omit<z.infer<typeof bodySchema>, 'name' | 'settings'> & {
  name: string;
  settingsPatch: z.infer<typeof settingsSchema>;
};

/** Other spellings that clients of the hosted product send, mapped to ours. */
export const CREATION_ALIASES: Readonly<Record<string, string>> = {
  proxyUsername: 'proxyUser',
  webhookMediaBase64: 'webhookBase64',
  websocketMediaBase64: 'websocketBase64',
  ...Object.fromEntries(
    [
      'Enabled',
      'BaseUrl',
      'AccountId',
      'ApiToken',
      'InboxName',
      'SignMessages',
      'IgnoreGroups',
      'StartAsPending',
      'ReopenResolved',
    ].map((s) => [`chatwoot${s}`, `helpdesk${s}`]),
  ),
  ...Object.fromEntries(
    Object.keys(fields)
      .filter((k) => k.startsWith('chatbot'))
      .map((k) => [`typebot${k.slice('chatbot'.length)}`, k]),
  ),
};

/** The creation body's other top-level spellings: the aliases above and the settings given flat. */
export function isCreationAlias(field: string): boolean {
  return Object.hasOwn(CREATION_ALIASES, field) || Object.hasOwn(settingsSchema.shape, field);
}

function invalid(detail: string): ValidationError {
  return new ValidationError(`Invalid request body: ${detail}`);
}

/**
 * Normalises aliases and flat settings, then checks the shape. `null` counts as absent, as clients of
 * the hosted product send it for fields they leave unset.
 */
export function parseCreationBody(raw: unknown): CreationBody {
  if (!isPlainObject(raw)) throw invalid('expected a JSON object');
  const body: Record<string, unknown> = {};
  const settingsPatch: Record<string, unknown> = {};
  const nested = raw.settings;
  if (nested !== undefined && nested !== null && !isPlainObject(nested)) {
    throw invalid("field 'settings': expected object");
  }

  for (const [key, value] of Object.entries(raw)) {
    if (value === null || key === 'settings') continue;
    const canonical = CREATION_ALIASES[key] ?? key;
    if (canonical !== key && raw[canonical] !== undefined && raw[canonical] !== null) {
      throw invalid(`'${key}' and '${canonical}' are the same field; send only one`);
    }
    if (SETTINGS_KEYS.includes(canonical)) {
      if (isPlainObject(nested) && nested[canonical] !== undefined) {
        throw invalid(`'${canonical}' is given both at the top level and in 'settings'; send only one`);
      }
      settingsPatch[canonical] = value;
      continue;
    }
    body[canonical] = value;
  }
  if (isPlainObject(nested)) {
    for (const [key, value] of Object.entries(nested)) if (value !== null) settingsPatch[key] = value;
  }

  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) throw invalid(describeIssue(parsed.error));
  const settings = settingsSchema.safeParse(settingsPatch);
  if (!settings.success) throw invalid(describeIssue(settings.error, ['settings']));

  const rawName = parsed.data.name ?? '';
  const name = rawName.trim();
  if (!name) throw new ValidationError('Instance name is required');
  // Control characters are refused even at the ends, where trim() would silently drop them.
  if (/[\u0000-\u001f\u007f]/.test(rawName) || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new ValidationError(
      'Invalid instance name: use 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
    );
  }
  const token = parsed.data.token;
  if (token !== undefined && !/^[\x21-\x7e]{8,256}$/.test(token)) {
    throw new ValidationError('Invalid instance token: use 8 to 256 printable characters without spaces');
  }
  return { ...parsed.data, name, settingsPatch: settings.data };
}

/** The blocks that have their own endpoint besides the creation body (POST /api/instance/s3|proxy). */
export type BlockPrefix = 's3' | 'proxy';

/** Short spellings accepted by the block endpoints (the names their summaries show). */
const SHORT_NAMES: Record<BlockPrefix, Record<string, string>> = {
  s3: {
    enabled: 's3Enabled',
    region: 's3Region',
    bucket: 's3Bucket',
    accessKey: 's3AccessKey',
    secretKey: 's3SecretKey',
    endpoint: 's3Endpoint',
    pathPrefix: 's3PathPrefix',
  },
  proxy: {
    enabled: 'proxyEnabled',
    host: 'proxyHost',
    port: 'proxyPort',
    protocol: 'proxyProtocol',
    user: 'proxyUser',
    username: 'proxyUser',
    password: 'proxyPassword',
  },
};

/**
 * The body of a block endpoint: the creation body's fields of that block (same types and limits), or
 * their short spellings (`bucket` for `s3Bucket`). Both spellings of one field, or an unknown field, are
 * refused; `null` counts as absent; at least one field is required.
 */
/** One block's fields under their creation-body names, each optional (the short names are accepted too). */
export function blockBodySchema(prefix: BlockPrefix) {
  const own = Object.entries(fields).filter(([k]) => k.startsWith(prefix));
  return z.strictObject(Object.fromEntries(own.map(([k, v]) => [k, v.optional()])));
}

/** A block body's other top-level spellings: its short names and the creation body's aliases. */
export function isBlockAlias(prefix: BlockPrefix): (field: string) => boolean {
  return (field) => Object.hasOwn(SHORT_NAMES[prefix], field) || Object.hasOwn(CREATION_ALIASES, field);
}

export function parseBlockBody(raw: Record<string, unknown>, prefix: BlockPrefix): Partial<CreationBody> {
  const schema = blockBodySchema(prefix);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null) continue;
    const canonical = SHORT_NAMES[prefix][key] ?? CREATION_ALIASES[key] ?? key;
    if (body[canonical] !== undefined) throw invalid(`'${key}' and '${canonical}' are the same field; send only one`);
    body[canonical] = value;
  }
  if (Object.keys(body).length === 0) throw new ValidationError('At least one field must be provided');
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalid(describeIssue(parsed.error));
  return parsed.data;
}
