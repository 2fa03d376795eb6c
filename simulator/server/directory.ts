import { randomInt } from 'node:crypto';
import { jidDecode } from '@whiskeysockets/baileys';
import type { BinaryNode } from '@whiskeysockets/baileys';

/** A device's public Signal keys, as it uploaded them (companions) or as the simulator made them (phones). */
export interface DeviceKeys {
  registrationId: number;
  /** Curve25519 identity public key, 32 bytes. */
  identity: Buffer;
  signedPreKey: { id: number; publicKey: Buffer; signature: Buffer };
  /** One-time pre-keys still on the server, by id; each is handed out once. */
  preKeys: Map<number, Buffer>;
}

/** Where stanzas for a device go while it is reachable. */
export interface Endpoint {
  /** A short id for logs and the observer (`c12` for a connection, `phone:<number>` for a phone). */
  readonly id: string;
  /** The node that opened the connection, as its `x-switchboard-node` header says (phones: undefined). */
  readonly node: string | undefined;
  /** Delivers one stanza; the receipt or ack comes back through the server's router. */
  send(node: BinaryNode): void;
}

/**
 * One device of an account: device 0 is the phone, the others are linked companions. A device keeps
 * its keys while linked; its pending stanzas live in the delivery queues, not here.
 */
export class Device {
  keys: DeviceKeys | undefined;
  /** A companion's noise static key: a login must present the same key. */
  noiseKey: Buffer | undefined;
  /** Signed device identity (ADV) of a companion, as the phone signed it. */
  keyIndex = 0;
  platform = 'unknown';
  /** A companion that asked for its full history at registration gets recent messages too. */
  requireFullSync = false;
  linkedAt = 0;
  endpoint: Endpoint | undefined;
  /** The device is linked (companions: until unlinked; phones: always). */
  linked = true;

  constructor(
    readonly account: Account,
    readonly id: number,
  ) {}

  get pnJid(): string {
    return this.id === 0 ? `${this.account.number}@s.whatsapp.net` : `${this.account.number}:${this.id}@s.whatsapp.net`;
  }

  get lidJid(): string {
    return this.id === 0 ? `${this.account.lid}@lid` : `${this.account.lid}:${this.id}@lid`;
  }

  /** The device's jid in the addressing of `like` (a LID jid answers LID, anything else PN). */
  jidLike(like: string): string {
    return like.endsWith('@lid') ? this.lidJid : this.pnJid;
  }
}

export type PrivacyName =
  'last' | 'online' | 'profile' | 'status' | 'readreceipts' | 'groupadd' | 'calladd' | 'messages';

/** A WhatsApp account: one phone number, its LID, its devices and what it set on its profile. */
export class Account {
  readonly devices = new Map<number, Device>();
  pushName: string;
  about = 'Hey there! I am using WhatsApp.';
  picture: Buffer | undefined;
  readonly privacy: Record<PrivacyName, string> = {
    last: 'all',
    online: 'all',
    profile: 'all',
    status: 'all',
    readreceipts: 'all',
    groupadd: 'all',
    calladd: 'all',
    messages: 'all',
  };
  readonly blocklist = new Set<string>();
  /** A WhatsApp Business account: its verified business name (pair-success says `smba` and names it). */
  business: { name: string } | undefined;
  #nextDevice = 1;
  #nextKeyIndex = 1;

  constructor(
    readonly number: string,
    readonly lid: string,
  ) {
    this.pushName = `Phone ${number.slice(-4)}`;
    this.devices.set(0, new Device(this, 0));
  }

  get pnJid(): string {
    return `${this.number}@s.whatsapp.net`;
  }

  get lidJid(): string {
    return `${this.lid}@lid`;
  }

  get phone(): Device {
    return this.devices.get(0)!;
  }

  /** Linked devices, the phone first. */
  linkedDevices(): Device[] {
    return [...this.devices.values()].filter((d) => d.linked).sort((a, b) => a.id - b.id);
  }

  addCompanion(): Device {
    const device = new Device(this, this.#nextDevice++);
    device.keyIndex = this.#nextKeyIndex++;
    this.devices.set(device.id, device);
    return device;
  }
}

/** Every account the simulator hosts, found by phone number or LID. */
export class Directory {
  readonly #byNumber = new Map<string, Account>();
  readonly #byLid = new Map<string, Account>();
  #nextNumber = 5511900000001;

  create(number?: string): Account {
    const n = number ?? this.#freshNumber();
    if (!/^\d{6,15}$/.test(n)) throw new Error(`not a phone number: ${n}`);
    if (this.#byNumber.has(n)) throw new Error(`number ${n} exists`);
    let lid: string;
    do lid = String(randomInt(100_000_000, 999_999_999)) + String(randomInt(100_000, 999_999));
    while (this.#byLid.has(lid));
    const account = new Account(n, lid);
    this.#byNumber.set(n, account);
    this.#byLid.set(lid, account);
    return account;
  }

  #freshNumber(): string {
    while (this.#byNumber.has(String(this.#nextNumber))) this.#nextNumber++;
    return String(this.#nextNumber++);
  }

  byNumber(number: string): Account | undefined {
    return this.#byNumber.get(number);
  }

  accounts(): Account[] {
    return [...this.#byNumber.values()];
  }

  /** The account of a user jid, PN or LID, with or without a device part. */
  account(jid: string | undefined): Account | undefined {
    const decoded = jidDecode(jid);
    if (!decoded?.user) return undefined;
    if (decoded.server === 'lid') return this.#byLid.get(decoded.user);
    if (decoded.server === 's.whatsapp.net' || decoded.server === 'c.us') return this.#byNumber.get(decoded.user);
    return undefined;
  }

  /** The device a device jid names (no device part: the phone). */
  device(jid: string | undefined): Device | undefined {
    const account = this.account(jid);
    if (!account) return undefined;
    const device = account.devices.get(jidDecode(jid)?.device ?? 0);
    return device?.linked ? device : undefined;
  }
}
