import { DeliveryQueues } from './delivery.js';
import { Directory } from './directory.js';
import type { Account, Device } from './directory.js';
import { GroupBook } from './group-book.js';
import { StanzaLog } from './stanza-log.js';

/** What the server asks of the phone of an account (the simulated primary device). */
export interface PhoneHooks {
  /** A companion of this account logged in for the first time: the phone shares keys and history. */
  onCompanionFirstLogin(companion: Device): void;
  /** A companion that registered asks to be linked by code: the phone will be told the code later. */
  readonly account: Account;
  /** The account's signature key (the phone's identity key). */
  readonly accountKey: Buffer;
}

/** The state every part of the server shares: who exists, what waits for whom, what happened. */
export class SimCore {
  readonly directory = new Directory();
  readonly log: StanzaLog;
  readonly queues: DeliveryQueues;
  readonly groups = new GroupBook();
  readonly phones = new Map<string, PhoneHooks>();
  /** Accounts that asked for another's presence: target account → subscribers. */
  readonly presenceSubscribers = new Map<Account, Set<Account>>();
  /** Last presence each account announced. */
  readonly presence = new Map<Account, { type: string; t: number }>();
  /** Calls by call id: ringing until answered, rejected, ended, or past RINGING_MS. */
  readonly calls = new Map<string, { ringingSince: number; ended: boolean }>();

  constructor(
    /** `host:port` of the media endpoint, given out in `media_conn`. */
    public mediaHost: string,
    maxLogEvents?: number,
  ) {
    this.log = new StanzaLog(maxLogEvents);
    this.queues = new DeliveryQueues(this.log);
  }
}
