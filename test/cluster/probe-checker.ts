import { existsSync, readFileSync } from 'node:fs';
import type { ProbeRecord } from '../../src/actors/test-probe.js';

export interface Violation {
  instance: string;
  stale: ProbeRecord;
  newer: ProbeRecord;
}

export function readProbe(file: string): ProbeRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ProbeRecord);
}

/**
 * The safety invariant of ownership: once a write under epoch e' was accepted, no write under an older
 * epoch e < e' may be accepted later. "Later" = started after the newer write had been accepted (all
 * nodes run on one host, so their wall clocks are one clock). Returns every violation.
 */
export function staleWrites(records: ProbeRecord[]): Violation[] {
  const byInstance = new Map<string, ProbeRecord[]>();
  for (const r of records) {
    const list = byInstance.get(r.instance) ?? [];
    list.push(r);
    byInstance.set(r.instance, list);
  }
  const violations: Violation[] = [];
  for (const [instance, list] of byInstance) {
    // For each epoch, the earliest moment one of its writes was known accepted.
    const firstAccepted = new Map<number, ProbeRecord>();
    for (const r of list) {
      const seen = firstAccepted.get(r.epoch);
      if (!seen || r.end < seen.end) firstAccepted.set(r.epoch, r);
    }
    for (const r of list) {
      for (const [epoch, newer] of firstAccepted) {
        if (epoch > r.epoch && r.start > newer.end) violations.push({ instance, stale: r, newer });
      }
    }
  }
  return violations;
}

/** Per instance, the epochs in the order their writes were accepted must never go down (per node too). */
export function epochsPerNode(records: ProbeRecord[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of [...records].sort((a, b) => a.end - b.end)) {
    const key = `${r.instance}@${r.node}`;
    const list = out.get(key) ?? [];
    if (list[list.length - 1] !== r.epoch) list.push(r.epoch);
    out.set(key, list);
  }
  return out;
}
