/**
 * What the observer reads: every connection, login and stanza the simulator saw, in order. The fault
 * harness's checkers read this and the phones' records, never the nodes.
 */
export type StanzaEventKind =
  | 'connect'
  | 'login'
  | 'login-refused'
  | 'registered'
  | 'replaced'
  | 'disconnect'
  | 'unlinked'
  | 'message'
  | 'deliver'
  | 'receipt'
  | 'ack'
  | 'presence'
  | 'chatstate'
  | 'call'
  | 'iq'
  | 'fault'
  | 'phone-received'
  | 'decrypt-failure';

export interface StanzaEvent {
  seq: number;
  /** Wall-clock milliseconds. */
  t: number;
  kind: StanzaEventKind;
  /** The device concerned (a device jid), when there is one. */
  device?: string;
  /** The endpoint concerned (`c12`, `phone:<number>`). */
  connection?: string;
  /** The node that opened the connection, as it said. */
  node?: string;
  /** The stanza's id (a message id, a receipt's first id). */
  id?: string;
  [field: string]: unknown;
}

/** An append-only log, bounded so that a long soak does not grow without end. */
export class StanzaLog {
  readonly #events: StanzaEvent[] = [];
  #seq = 0;

  constructor(private readonly maxEvents = 500_000) {}

  add(event: Omit<StanzaEvent, 'seq' | 't'>): StanzaEvent {
    const full = { seq: ++this.#seq, t: Date.now(), ...event } as StanzaEvent;
    this.#events.push(full);
    if (this.#events.length > this.maxEvents) this.#events.splice(0, this.#events.length - this.maxEvents);
    return full;
  }

  /** Events after `seq`, oldest first, at most `limit`. */
  after(seq: number, limit = 10_000): StanzaEvent[] {
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#events[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return this.#events.slice(lo, lo + limit);
  }

  get lastSeq(): number {
    return this.#seq;
  }
}
