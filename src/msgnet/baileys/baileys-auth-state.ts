import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';
import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataSet,
  SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import { isOwnershipLoss } from '../../errors.js';
import type { AuthStore } from '../msgnet-driver.js';

export const CREDS_KEY = 'creds';

/** Entries to write, built when the write starts (so that a queued write carries the newest state). */
export type EntriesBuilder = () => Record<string, string | null>;

/** Reads and queued writes of instance-owned keys beside the link (labels, status audience). */
export interface SessionStorage {
  list(prefix: string): Promise<Map<string, string>>;
  write(build: EntriesBuilder): Promise<void>;
  /** The stored values of these keys (the missing ones left out). */
  read(keys: string[]): Promise<Map<string, string>>;
}

export interface BaileysAuthHooks {
  /** Called once when the store refuses a write because this node no longer owns the instance. */
  onOwnershipLost?: (err: unknown) => void;
  /**
   * Called, before the error reaches Baileys, when any other write fails (the store unavailable). Baileys
   * takes a failed key write for a message it cannot decrypt and answers the network with a retry request
   * and an error ack, after which WhatsApp forgets the message: the hook ends the socket first, so nothing
   * is answered and the message comes again at the next login.
   */
  onWriteFailed?: (err: unknown) => void;
}

/** A key write from a socket that has ended (see BaileysAuth.stateWhile). */
export class SocketEndedError extends Error {
  constructor() {
    super('the socket ended: its Signal key changes are not stored');
    this.name = 'SocketEndedError';
  }
}

export function keyOf(type: string, id: string): string {
  return `${type}:${id}`;
}

export function serialize(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer);
}

export function deserialize<T>(raw: string): T {
  return JSON.parse(raw, BufferJSON.reviver) as T;
}

/**
 * Baileys' `AuthenticationState` over our fenced `AuthStore`: `creds` under `creds`, signal keys under
 * `<type>:<id>`. Every write goes through one queue, so the store sees them in the order Baileys made
 * them, and each `keys.set` is exactly one `AuthStore.set` (one transaction).
 */
export class BaileysAuth implements SessionStorage {
  readonly state: AuthenticationState;
  #tail: Promise<void> = Promise.resolve();
  #credsWrite: Promise<void> | undefined;
  #ownershipLost: Error | undefined;
  #cleared = false;

  private constructor(
    private readonly store: AuthStore,
    creds: AuthenticationCreds,
    private readonly hooks: BaileysAuthHooks,
  ) {
    this.state = {
      creds,
      keys: {
        get: (type, ids) => this.#getKeys(type, ids),
        set: (data) => this.#setKeys(data),
      },
    };
  }

  /** Reads the saved creds, or makes new ones (a device that is not linked yet). */
  static async load(store: AuthStore, hooks: BaileysAuthHooks = {}): Promise<BaileysAuth> {
    const raw = await store.get(CREDS_KEY);
    const creds = raw === undefined ? initAuthCreds() : deserialize<AuthenticationCreds>(raw);
    return new BaileysAuth(store, creds, hooks);
  }

  /**
   * The state one socket works with: its Signal key writes are refused once `alive` says it ended. A
   * socket that ended still decrypts the messages it had queued, and Baileys stores the keys that spends
   * before the event (which has no listener any more) is lost; refused, the keys stay as they were, and
   * WhatsApp's next copy, to the next socket or owner, can be decrypted.
   */
  stateWhile(alive: () => boolean): AuthenticationState {
    return {
      creds: this.state.creds,
      keys: {
        get: (type, ids) => this.#getKeys(type, ids),
        set: (data) => (alive() ? this.#setKeys(data) : Promise.reject(new SocketEndedError())),
      },
    };
  }

  /** Linked to a phone. rc14 never sets `creds.registered`; `account` is written on pair-success only. */
  get registered(): boolean {
    const { creds } = this.state;
    return !!creds.me?.id && (creds.registered || !!creds.account);
  }

  /** Persists the whole creds object; resolves once a write made after this call is durable. */
  saveCreds(): Promise<void> {
    // A write still waiting in the queue serialises creds when it starts, so it already covers this call.
    this.#credsWrite ??= this.write(() => {
      this.#credsWrite = undefined;
      return { [CREDS_KEY]: serialize(this.state.creds) };
    });
    return this.#credsWrite;
  }

  list(prefix: string): Promise<Map<string, string>> {
    return this.store.list(prefix);
  }

  read(keys: string[]): Promise<Map<string, string>> {
    return this.store.getMany(keys);
  }

  /** Queues one `AuthStore.set` (one transaction) of the entries `build` returns when the write starts. */
  write(build: EntriesBuilder): Promise<void> {
    const run = this.#tail.then(async () => {
      if (this.#cleared) return;
      if (this.#ownershipLost !== undefined) throw this.#ownershipLost;
      const entries = build();
      if (Object.keys(entries).length === 0) return;
      try {
        await this.store.set(entries);
      } catch (err) {
        if (err instanceof Error && isOwnershipLoss(err) && this.#ownershipLost === undefined) {
          this.#ownershipLost = err;
          this.hooks.onOwnershipLost?.(err);
        } else if (this.#ownershipLost === undefined) {
          this.hooks.onWriteFailed?.(err);
        }
        throw err;
      }
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every write queued so far has settled. */
  async drain(): Promise<void> {
    await this.#tail;
  }

  /** Forgets the link: later writes (from a socket that is still winding down) are dropped. */
  async clear(): Promise<void> {
    this.#cleared = true;
    await this.#tail;
    await this.store.clear();
  }

  async #getKeys<T extends keyof SignalDataTypeMap>(
    type: T,
    ids: string[],
  ): Promise<{ [id: string]: SignalDataTypeMap[T] }> {
    const out: { [id: string]: SignalDataTypeMap[T] } = {};
    if (ids.length === 0) return out;
    const found = await this.store.getMany(ids.map((id) => keyOf(type, id)));
    for (const id of ids) {
      const raw = found.get(keyOf(type, id));
      if (raw === undefined) continue;
      const value = deserialize<unknown>(raw);
      out[id] = (
        type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value
      ) as SignalDataTypeMap[T];
    }
    return out;
  }

  #setKeys(data: SignalDataSet): Promise<void> {
    const entries: Record<string, string | null> = {};
    let newPreKeys = false;
    for (const [type, values] of Object.entries(data) as [string, Record<string, unknown> | undefined][]) {
      for (const [id, value] of Object.entries(values ?? {})) {
        entries[keyOf(type, id)] = value === null || value === undefined ? null : serialize(value);
        if (type === 'pre-key' && value) newPreKeys = true;
      }
    }
    return this.write(() => {
      // New pre-keys and the `nextPreKeyId` that describes them land together, or ids collide after a crash.
      if (newPreKeys) entries[CREDS_KEY] = serialize(this.state.creds);
      return entries;
    });
  }
}
