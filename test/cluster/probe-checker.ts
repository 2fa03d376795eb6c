import { existsSync, readFileSync } from 'node:fs';
import type { OwnerRecord, ProbeRecord } from '../../src/actors/test-probe.js';

export interface Violation {
  instance: string;
  stale: ProbeRecord;
  newer: ProbeRecord;
}

function readLines(file: string): (ProbeRecord | OwnerRecord)[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ProbeRecord | OwnerRecord);
}

/** The accepted owned writes the probe recorded. */
export function readProbe(file: string): ProbeRecord[] {
  return readLines(file).filter((r): r is ProbeRecord => r.kind !== 'owner');
}

/** The moments at which an actor held itself the owner. */
export function readOwners(file: string): OwnerRecord[] {
  return readLines(file).filter((r): r is OwnerRecord => r.kind === 'owner');
}

export interface TwoOwners {
  instance: string;
  /** The owner whose epoch was superseded, still holding itself the owner… */
  old: OwnerRecord;
  /** …after the newer epoch's owner had already begun to act. */
  newer: OwnerRecord;
}

/**
 * Exactly one owner at a time: once an owner under epoch e' has held itself the owner, no node may hold
 * itself the owner under an older epoch e < e' (it could act outside the store: send, reject a call).
 * All nodes run on one host, so their wall clocks are one clock.
 */
export function twoOwners(records: OwnerRecord[]): TwoOwners[] {
  const byInstance = new Map<string, OwnerRecord[]>();
  for (const r of records) {
    const list = byInstance.get(r.instance) ?? [];
    list.push(r);
    byInstance.set(r.instance, list);
  }
  const found: TwoOwners[] = [];
  for (const [instance, list] of byInstance) {
    const first = new Map<number, OwnerRecord>();
    for (const r of list) {
      const seen = first.get(r.epoch);
      if (!seen || r.at < seen.at) first.set(r.epoch, r);
    }
    for (const r of list) {
      for (const [epoch, newer] of first) {
        if (epoch > r.epoch && r.at > newer.at) found.push({ instance, old: r, newer });
      }
    }
  }
  return found;
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
