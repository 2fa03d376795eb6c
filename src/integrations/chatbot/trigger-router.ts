import type { ChatbotBotRecord } from '../../store/records.js';
import { matchesRegex } from './safe-regex.js';

export type RoutableBot = Pick<
  ChatbotBotRecord,
  'botId' | 'enabled' | 'triggerType' | 'triggerOperator' | 'triggerValue' | 'ignoreGroups' | 'fallback' | 'createdAt'
>;

export type RegexTest = (pattern: string, input: string) => boolean | 'timeout';

const norm = (s: string) => s.trim().toLowerCase();

/**
 * Which enabled bot answers a message that no session holds (spec 4.8), highest priority first:
 * `equals`, then `startsWith`/`endsWith`, then `contains`, then `regex`, then the `all` bot, then the
 * fallback bot. Text comparisons ignore case and surrounding spaces. Within one tier the longest trigger
 * value wins (the most specific), then the oldest bot. Bots that ignore groups skip group messages; a
 * regex that runs out of time counts as no match (`onTimeout` is told).
 */
export function routeMessage<B extends RoutableBot>(
  bots: readonly B[],
  text: string,
  isGroup: boolean,
  options: { regex?: RegexTest; onTimeout?: (bot: B) => void } = {},
): B | undefined {
  const regex = options.regex ?? matchesRegex;
  const eligible = bots.filter((b) => b.enabled && !(isGroup && b.ignoreGroups));
  const message = norm(text);
  const keyword = (ops: string[], test: (value: string, bot: B) => boolean) =>
    eligible
      .filter((b) => b.triggerType === 'keyword' && ops.includes(b.triggerOperator ?? '') && b.triggerValue)
      .sort(
        (a, b) =>
          (b.triggerValue ?? '').length - (a.triggerValue ?? '').length || a.createdAt.localeCompare(b.createdAt),
      )
      .find((b) => test(b.triggerValue!, b));
  const hit =
    keyword(['equals'], (v) => message === norm(v)) ??
    keyword(['startsWith', 'endsWith'], (v, b) =>
      b.triggerOperator === 'startsWith' ? message.startsWith(norm(v)) : message.endsWith(norm(v)),
    ) ??
    keyword(['contains'], (v) => message.includes(norm(v))) ??
    keyword(['regex'], (v, b) => {
      const result = regex(v, text.trim());
      if (result === 'timeout') options.onTimeout?.(b);
      return result === true;
    });
  if (hit) return hit;
  const byAge = [...eligible].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return byAge.find((b) => b.triggerType === 'all') ?? byAge.find((b) => b.fallback);
}
