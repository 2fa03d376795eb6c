/** A length of time as the billing options give it: calendar months, or a fixed number of milliseconds. */
export interface Duration {
  months: number;
  ms: number;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `30m`, `24h`, `7d`, `2w`, `1mo`, `250ms`; undefined when the text is not one of these. */
export function parseDuration(raw: string): Duration | undefined {
  const m = /^(\d+)\s*(ms|s|m|h|d|w|mo)$/.exec(raw.trim().toLowerCase());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isSafeInteger(n) || n <= 0) return undefined;
  return m[2] === 'mo' ? { months: n, ms: 0 } : { months: 0, ms: n * UNIT_MS[m[2]!]! };
}

/** `at` (Unix ms) moved by `times` × `d`; months are calendar months in UTC, the day clamped to the month's last. */
export function addDuration(at: number, d: Duration, times = 1): number {
  if (d.months === 0) return at + d.ms * times;
  const date = new Date(at);
  const month = date.getUTCMonth() + d.months * times;
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), month + 1, 0)).getUTCDate();
  const moved = Date.UTC(
    date.getUTCFullYear(),
    month,
    Math.min(date.getUTCDate(), lastDay),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
    date.getUTCMilliseconds(),
  );
  return moved;
}
