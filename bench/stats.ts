/** Small statistics and table helpers for the benches (no dependencies). */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The p-th percentile (0..100) of samples sorted ascending, nearest-rank method: the smallest sample
 * such that at least p% of the samples are ≤ it. NaN for no samples.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** n, p50, p90, p99, max and mean of samples in milliseconds (any order). */
export function summary(samplesMs: readonly number[]): Summary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    n,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: n ? sorted[n - 1]! : Number.NaN,
    mean: n ? sorted.reduce((s, x) => s + x, 0) / n : Number.NaN,
  };
}

/** The middle value of at least one (the upper of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
}

/** A number with a fixed count of decimals ("–" for NaN). */
export function fmt(x: number, decimals = 2): string {
  return Number.isNaN(x) ? '–' : x.toFixed(decimals);
}

/**
 * Renders rows as an aligned text table: the first column left-aligned, the others right-aligned,
 * a rule under the header.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Prints a table (see `table`) with an optional title line above it. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[], title?: string): void {
  if (title) console.log(`\n${title}`);
  console.log(table(header, rows));
}
