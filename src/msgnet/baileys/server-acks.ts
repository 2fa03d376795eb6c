import { DisconnectReason } from '@whiskeysockets/baileys';
import { NotConnectedError, OutcomeUnknownError } from '../../errors.js';
import { systemClock } from '../../util/clock.js';
import type { Cancel, Clock } from '../../util/clock.js';
import { statusCodeOf } from './disconnect-policy.js';
import { SocketEndedError } from './baileys-auth-state.js';
import type { BaileysSocket } from './socket-port.js';

/** How long a send waits for WhatsApp's ack of its stanza before its outcome counts as unknown. */
export const SERVER_ACK_TIMEOUT_MS = 10_000;
/** Acks that arrive before their send waits for them (a loopback server is fast) are kept this long. */
const EARLY_ACK_MS = 60_000;

/** What a socket emits for every frame: Baileys' websocket client, an EventEmitter of `CB:<tag>,…` events. */
interface FrameEmitter {
  on(event: string, listener: (node: { attrs: Record<string, string> }) => void): unknown;
  off(event: string, listener: (node: { attrs: Record<string, string> }) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

const ACK_EVENT = 'CB:ack,class:message';

/**
 * WhatsApp's acks of the messages one socket sent. A message is WhatsApp's to deliver only once the
 * server acked it: a send written to a socket that then dies is not (it lies in our buffers, or the
 * server dropped the connection before reading it), and Baileys never sends it again. So a send answers
 * only after the ack; without one before the socket closes or the timeout, its outcome is unknown.
 */
export class ServerAcks {
  readonly #waiting = new Map<string, { resolve: () => void; reject: (err: Error) => void; cancel: Cancel }>();
  readonly #early = new Map<string, number>();
  #closed: Error | undefined;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly timeoutMs = SERVER_ACK_TIMEOUT_MS,
    /**
     * A send waited out the timeout: WhatsApp acks within a second on a live connection, so the socket is
     * likely dead without knowing it (a half-open TCP connection, found by the keep-alive only 30 to 60 s
     * later), and the owner ends it to connect again now.
     */
    private readonly onTimeout: () => void = () => undefined,
  ) {}

  /** The server acked `id` (with or without an error: either way it has the message). */
  acked(id: string): void {
    const waiter = this.#waiting.get(id);
    if (waiter) {
      this.#waiting.delete(id);
      waiter.cancel();
      waiter.resolve();
      return;
    }
    const now = this.clock.now();
    for (const [k, at] of this.#early) if (now - at > EARLY_ACK_MS) this.#early.delete(k);
    this.#early.set(id, now);
  }

  /** Resolves once the server acked `id`; rejects with OutcomeUnknownError if the socket closes or time runs out. */
  wait(id: string): Promise<void> {
    if (this.#early.delete(id)) return Promise.resolve();
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise<void>((resolve, reject) => {
      const cancel = this.clock.after(this.timeoutMs, () => {
        this.#waiting.delete(id);
        reject(unacknowledged(`no ack from WhatsApp within ${this.timeoutMs} ms`));
        this.onTimeout();
      });
      this.#waiting.set(id, { resolve, reject, cancel });
    });
  }

  /**
   * A query WhatsApp answers with its ack (a call's rejection), bounded like a send: Baileys would wait
   * 60 s for it, holding the owner's events behind it, on a connection that is likely dead.
   */
  within<T>(query: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cancel = this.clock.after(this.timeoutMs, () => {
        reject(
          new OutcomeUnknownError(
            `The ${what} was written to WhatsApp, but no answer came within ${this.timeoutMs} ms`,
          ),
        );
        this.onTimeout();
      });
      query.then(
        (value) => {
          cancel();
          resolve(value);
        },
        (err: unknown) => {
          cancel();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /** The socket is gone: every send still waiting may or may not have reached WhatsApp. */
  close(): void {
    this.#closed ??= unacknowledged('the connection to WhatsApp closed before its ack');
    for (const [id, waiter] of this.#waiting) {
      this.#waiting.delete(id);
      waiter.cancel();
      waiter.reject(this.#closed);
    }
  }
}

/** The socket's own write errors: the connection failed under the stanza being written. */
const SOCKET_WRITE_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED']);

/**
 * Baileys' "Connection Closed" (428) from a send means the stanza never reached the socket: it was
 * closed, or a query the send needed first (devices, sessions) ended with it. The message is not sent,
 * and the instance is not connected: the caller may send it again once it is. A write the socket itself
 * failed (a reset connection) may have left part of it on the wire: its outcome is unknown, and the
 * caller sends it again under the same id, which WhatsApp takes as the same message.
 */
async function notWrittenOnClose<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (statusCodeOf(err) === Number(DisconnectReason.connectionClosed)) throw new NotConnectedError();
    // Baileys writes the stanza inside the Signal key transaction: the socket ending before its commit
    // may come after the write.
    if (err instanceof SocketEndedError) {
      throw new OutcomeUnknownError(
        'The connection to WhatsApp ended while the message was sent: it may or may not be sent',
        {
          cause: err,
        },
      );
    }
    const code = (err as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && SOCKET_WRITE_ERRORS.has(code)) {
      throw new OutcomeUnknownError(
        `The connection to WhatsApp failed while the message was written (${code}): it may or may not be sent`,
        { cause: err },
      );
    }
    throw err;
  }
}

function unacknowledged(why: string): OutcomeUnknownError {
  return new OutcomeUnknownError(`The message was written to WhatsApp, but ${why}: it may or may not be sent`);
}

/**
 * The socket the session uses, whose `sendMessage` and `relayMessage` resolve only once WhatsApp acked
 * the stanza, and whose `rejectCall` waits for WhatsApp's answer no longer than a send waits for its ack.
 * A socket without a frame emitter (a test's fake) is used as it is. Returns the detach.
 */
export function awaitingServerAcks(sock: BaileysSocket, acks: ServerAcks): { sock: BaileysSocket; detach: () => void } {
  const ws = (sock as { ws?: FrameEmitter }).ws;
  if (!ws || typeof ws.on !== 'function') return { sock, detach: () => undefined };
  const onAck = (node: { attrs: Record<string, string> }) => {
    if (node.attrs.id) acks.acked(node.attrs.id);
  };
  ws.on(ACK_EVENT, onAck);
  // No ack comes over a closed socket: the sends still waiting learn it at once, not at the timeout.
  ws.once('close', () => acks.close());
  // Everything else, getters included (`user` reads the live credentials), is the socket's own.
  const wrapped = Object.create(sock) as BaileysSocket;
  wrapped.sendMessage = async (...args) => {
    const msg = await notWrittenOnClose(() => sock.sendMessage(...args));
    if (msg?.key.id) await acks.wait(msg.key.id);
    return msg;
  };
  wrapped.rejectCall = (...args) =>
    acks.within(
      notWrittenOnClose(() => sock.rejectCall(...args)),
      'call rejection',
    );
  wrapped.relayMessage = async (...args) => {
    const id = await notWrittenOnClose(() => sock.relayMessage(...args));
    await acks.wait(id);
    return id;
  };
  return {
    sock: wrapped,
    detach: () => {
      ws.off(ACK_EVENT, onAck);
      acks.close();
    },
  };
}
