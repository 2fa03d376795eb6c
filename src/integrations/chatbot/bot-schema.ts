import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { checkTriggerPattern } from '../../instances/trigger-pattern.js';
import type { ChatbotBotRecord, ChatbotTriggerOperator } from '../../store/records.js';
import { describeIssue, isPlainObject } from '../../validation.js';
import { checkFlowUrl } from './typebot-client.js';

/** A bot's settings: the record without its identity and timestamps. */
export type BotSettings = Omit<ChatbotBotRecord, 'instanceId' | 'botId' | 'createdAt' | 'updatedAt'>;
/** A partial update (PATCH); `null` clears an optional field. */
export type BotPatch = Partial<Record<keyof BotSettings, unknown>>;

export const TRIGGER_OPERATORS: readonly ChatbotTriggerOperator[] = [
  'contains',
  'equals',
  'startsWith',
  'endsWith',
  'regex',
];
/** Limits of the numeric fields. */
export const BOT_LIMITS = { expireMinutes: 525_600, typingDelayMs: 60_000, debounceSeconds: 3600 } as const;

const text = (max: number) => z.string().max(max);
const fields = {
  enabled: z.boolean(),
  label: text(256),
  url: text(2048),
  triggerType: z.enum(['all', 'keyword']),
  triggerOperator: z.enum(TRIGGER_OPERATORS as [ChatbotTriggerOperator, ...ChatbotTriggerOperator[]]).nullable(),
  triggerValue: text(1024).nullable(),
  // Fractions allowed (0.5 = 30 s); whole minutes are what the spec describes.
  expireMinutes: z.number().min(0).max(BOT_LIMITS.expireMinutes),
  expireMessage: text(4096),
  keywordFinish: text(256),
  finishMessage: text(4096),
  typingDelayMs: z.number().int().min(0).max(BOT_LIMITS.typingDelayMs),
  stopBotFromMe: z.boolean(),
  debounceSeconds: z.number().int().min(0).max(BOT_LIMITS.debounceSeconds),
  ignoreGroups: z.boolean(),
  noStartFromMe: z.boolean(),
  keepOpen: z.boolean(),
  fallback: z.boolean(),
};

/** A new bot's body (`url` and `triggerType` are checked as required by `checkBot`). */
export const createSchema = z.strictObject(
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  },
);
/** An update's body: the bot's id (or `?botId=`) and the fields to change. */
export const patchSchema = createSchema.extend({ botId: z.string().optional() });

/** Defaults of a new bot (spec 2: typing delay 0, stop on manual reply false, debounce 0, ignore groups true). */
export const BOT_DEFAULTS: Omit<BotSettings, 'url' | 'triggerType'> = {
  enabled: true,
  label: '',
  triggerOperator: undefined,
  triggerValue: undefined,
  expireMinutes: 0,
  expireMessage: '',
  keywordFinish: '',
  finishMessage: '',
  typingDelayMs: 0,
  stopBotFromMe: false,
  debounceSeconds: 0,
  ignoreGroups: true,
  noStartFromMe: false,
  keepOpen: false,
  fallback: false,
};

function parse<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
  return parsed.data;
}

const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The body of POST /api/chatbot/set: shape only (checkBot checks the meaning). */
export function parseCreateBody(raw: unknown): BotPatch {
  return defined(parse(createSchema, raw));
}

/** The body of PATCH /api/chatbot/update: the bot's id (or `?botId=`) and the fields to change. */
export function parsePatchBody(raw: unknown, queryBotId: string | undefined): { botId: string; patch: BotPatch } {
  const { botId, ...patch } = parse(patchSchema, raw);
  const id = (botId ?? queryBotId)?.trim();
  if (!id) throw new ValidationError('botId is required');
  if (Object.values(patch).every((v) => v === undefined)) {
    throw new ValidationError('At least one bot field must be provided');
  }
  return { botId: id, patch: defined(patch) };
}

/**
 * Applies a patch to a bot's settings (or to nothing, for a new bot) and checks the result: the URL
 * (http(s), no private address, a flow's public id), the trigger (operator and value for keyword bots, a
 * safe regex), and clears what a catch-all bot does not use.
 */
export function checkBot(base: BotSettings | undefined, patch: BotPatch, allowPrivateUrls: boolean): BotSettings {
  const merged = { ...BOT_DEFAULTS, ...(base ?? {}), ...defined(patch) } as Record<string, unknown>;
  for (const k of ['triggerOperator', 'triggerValue'] as const) if (merged[k] === null) merged[k] = undefined;
  const bot = merged as unknown as BotSettings;
  if (typeof merged.url !== 'string' || !merged.url.trim()) throw new ValidationError('url is required');
  bot.url = checkFlowUrl(merged.url, allowPrivateUrls);
  if (bot.triggerType !== 'all' && bot.triggerType !== 'keyword') {
    throw new ValidationError("triggerType must be 'all' or 'keyword'");
  }
  if (bot.triggerType === 'all') {
    bot.triggerOperator = undefined;
    bot.triggerValue = undefined;
  } else {
    if (!bot.triggerOperator || !TRIGGER_OPERATORS.includes(bot.triggerOperator)) {
      throw new ValidationError(`triggerOperator must be one of: ${TRIGGER_OPERATORS.join(', ')}`);
    }
    if (!bot.triggerValue?.trim()) throw new ValidationError('triggerValue is required for keyword triggers');
    if (bot.triggerOperator === 'regex') {
      const problem = checkTriggerPattern(bot.triggerValue);
      if (problem) throw new ValidationError(`triggerValue: ${problem}`);
    } else bot.triggerValue = bot.triggerValue.trim();
  }
  // The body's schema checks these too; the creation block's own schema is wider.
  for (const [field, max, int] of [
    ['expireMinutes', BOT_LIMITS.expireMinutes, false],
    ['typingDelayMs', BOT_LIMITS.typingDelayMs, true],
    ['debounceSeconds', BOT_LIMITS.debounceSeconds, true],
  ] as const) {
    const value = bot[field];
    if (!(value >= 0 && value <= max) || (int && !Number.isInteger(value))) {
      throw new ValidationError(`${field} must be ${int ? 'an integer ' : ''}from 0 to ${max}`);
    }
  }
  bot.keywordFinish = bot.keywordFinish.trim();
  return bot;
}
