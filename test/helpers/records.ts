import { randomUUID } from 'node:crypto';
import { DEFAULT_SETTINGS } from '../../src/store/records.js';
import type { InstanceRecord } from '../../src/store/records.js';

/** A disconnected instance of `accountId` with the default settings and no configuration blocks. */
export function instanceRecord(accountId: string, overrides: Partial<InstanceRecord> = {}): InstanceRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    accountId,
    name: `inst-${randomUUID().slice(0, 8)}`,
    tokenHash: randomUUID(),
    tokenSealed: 'v1:sealed',
    ownerEpoch: 0,
    config: {
      settings: { ...DEFAULT_SETTINGS },
      proxy: undefined,
      websocket: undefined,
      helpdesk: undefined,
      chatbot: undefined,
      storage: undefined,
    },
    connection: { state: 'disconnected', numberJid: undefined, updatedAt: now },
    createdAt: now,
    ...overrides,
  };
}
