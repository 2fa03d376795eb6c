import { MongoServerError } from 'mongodb';
import type { AccountRecord, InstanceRecord, WebhookRecord } from '../records.js';

// The documents of the accounts, instances, webhooks and owned_state collections, and the helpers their
// repositories share.

/** `instanceCount` is reserved before an instance insert so the quota check is atomic. */
export type AccountDoc = Omit<AccountRecord, 'id'> & { _id: string; instanceCount: number };
/** `ownedWrites` counts fenced owned writes: touching it is what makes a concurrent claim conflict. */
export type InstanceDoc = Omit<InstanceRecord, 'id'> & {
  _id: string;
  ownedWrites?: number;
  /** The node holding the instance and its node lease's token; null or absent when none. */
  ownerNode?: string | null;
  ownerToken?: string | null;
};
export type WebhookDoc = Omit<
  WebhookRecord,
  'authorizationSealed' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretUntil'
> & {
  _id: string;
  authorizationSealed: string | null;
  secretSealed?: string | null;
  previousSecretSealed?: string | null;
  previousSecretUntil?: string | null;
};

export interface OwnedStateDoc {
  instanceId: string;
  namespace: string;
  key: string;
  value: string;
  /** Owner epoch of the last write; a writer may only touch documents at or below its own epoch. */
  epoch: number;
}

/** A node's last lease renewal (`_id` the node id), stamped by the server. */
export interface NodeHeartbeatDoc {
  _id: string;
  token: string;
  at: Date;
}

/** BSON stores `undefined` as null; records use `undefined` for absent optional fields. */
export function nullToUndefined<T>(value: T): T {
  if (value === null) return undefined as T;
  if (Array.isArray(value)) return value.map((v: unknown) => nullToUndefined(v)) as T;
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nullToUndefined(v as unknown)])) as T;
  }
  return value;
}

/** MongoDB's error code for a write refused by a unique index. */
export const DUPLICATE_KEY = 11000;

export function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof MongoServerError && err.code === DUPLICATE_KEY;
}

/** Names of the fields of the unique index a duplicate-key error hit (keyPattern, else the index name). */
export function duplicateKeyFields(err: MongoServerError): string[] {
  const pattern: unknown = err.keyPattern ?? err.errorResponse.keyPattern;
  if (pattern !== null && typeof pattern === 'object') return Object.keys(pattern);
  return /index: (\S+)/.exec(err.message)?.[1]?.split('_') ?? [];
}

/** Connection states in which an instance must run (with a saved link, it must run in any state). */
export const RUNNING_STATES: string[] = ['connecting', 'qr', 'connected'];
