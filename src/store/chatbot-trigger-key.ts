import type { ChatbotBotRecord } from './records.js';

/**
 * The key that must be unique among an instance's bots (spec 2): `all` for the enabled catch-all bot,
 * `keyword:<operator>:<value>` for every keyword bot (the value lower-cased, as matching ignores case,
 * except for regexes), none for a disabled catch-all bot.
 */
export function chatbotTriggerKey(
  bot: Pick<ChatbotBotRecord, 'enabled' | 'triggerType' | 'triggerOperator' | 'triggerValue'>,
): string | undefined {
  if (bot.triggerType === 'all') return bot.enabled ? 'all' : undefined;
  const value =
    bot.triggerOperator === 'regex' ? (bot.triggerValue ?? '') : (bot.triggerValue ?? '').trim().toLowerCase();
  return `keyword:${bot.triggerOperator ?? ''}:${value}`;
}
