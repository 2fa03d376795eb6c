import { addTransactionCapability } from '@whiskeysockets/baileys';
import type { SignalDataSet, SignalDataTypeMap, SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';

/** A phone's Signal store: in memory (a phone lives as long as its simulator), with Baileys' transactions. */
export function memoryKeyStore(logger: ILogger): SignalKeyStoreWithTransaction {
  const data = new Map<string, unknown>();
  const store = {
    get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]): { [id: string]: SignalDataTypeMap[T] } {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}/${id}`);
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set(set: SignalDataSet): void {
      for (const [type, values] of Object.entries(set)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
  return addTransactionCapability(store, logger, { maxCommitRetries: 3, delayBetweenTriesMs: 5 });
}
