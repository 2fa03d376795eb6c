import type { Logger } from 'pino';
import type { Acknowledge } from '../msgnet-events.js';

/** Settlements that arrive before the network's ack is handed over (a call's offer) are kept this long. */
const EARLY_SETTLE_MS = 60_000;

/**
 * The receipts and call acks of one socket that Baileys hands over instead of sending (the patched
 * `deferMessageReceipt` / `deferCallAck` options): each is sent when the owner settles its event, or
 * never, if the socket closes first, and WhatsApp then gives the message to the next connection.
 */
export class NetworkAcks {
  readonly #pending = new Map<string, (() => Promise<void>)[]>();
  /**
   * Message receipts by the message object Baileys hands over and then upserts: one id can arrive as
   * several copies (one that failed to decrypt, then the one sent again on a retry receipt), and only
   * the copy whose event was stored may release its receipt.
   */
  readonly #messages = new Map<object, () => Promise<void>>();
  /** Ids settled before their ack arrived, with when (a call's ack comes after its event). */
  readonly #early = new Map<string, number>();
  #closed = false;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Baileys hands over the ack of `id`; it goes out at once if the owner already settled it. */
  defer(id: string, send: () => Promise<void>): void {
    if (this.#closed) return;
    if (this.#early.delete(id)) {
      this.#send(id, send);
      return;
    }
    const list = this.#pending.get(id);
    if (list) list.push(send);
    else this.#pending.set(id, [send]);
  }

  /** Baileys hands over the receipt of one received message (the object it upserts next). */
  deferMessage(message: object, send: () => Promise<void>): void {
    if (!this.#closed) this.#messages.set(message, send);
  }

  /** What the owner calls once the event of this message object is durably handled (or needs none). */
  acknowledgeMessage(message: object, id: string): Acknowledge {
    let done = false;
    return () => {
      if (done || this.#closed) return;
      done = true;
      const send = this.#messages.get(message);
      if (!send) return;
      this.#messages.delete(message);
      this.#send(id, send);
    };
  }

  /**
   * What the owner calls once the event of `id` is durably handled. `early`: the ack may be handed over
   * after the event (a call offer's), so a settlement that finds none is kept for it.
   */
  acknowledge(id: string, early = false): Acknowledge {
    let done = false;
    return () => {
      if (done || this.#closed) return;
      done = true;
      const sends = this.#pending.get(id);
      if (!sends) {
        if (early) this.#remember(id);
        return;
      }
      this.#pending.delete(id);
      for (const send of sends) this.#send(id, send);
    };
  }

  #send(id: string, send: () => Promise<void>): void {
    send().catch((err: unknown) => this.log.debug({ err, id }, 'could not acknowledge to the network'));
  }

  #remember(id: string): void {
    const now = this.now();
    for (const [k, at] of this.#early) if (now - at > EARLY_SETTLE_MS) this.#early.delete(k);
    this.#early.set(id, now);
  }

  /** How many acks wait for their owner (metrics, tests). */
  get waiting(): number {
    return this.#pending.size + this.#messages.size;
  }

  /** The socket is gone: what was not sent never will be (the network redelivers it). */
  close(): void {
    this.#closed = true;
    this.#pending.clear();
    this.#messages.clear();
    this.#early.clear();
  }
}
