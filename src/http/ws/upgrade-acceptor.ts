import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { WsMessage, jsonError, refuseUpgrade } from './upgrade-guard.js';

/** What an upgrade that passed its checks holds, and what becomes of it. */
export interface AcceptedUpgrade {
  /** The 101's extra headers (request id, rate limit). */
  headers: Record<string, string>;
  /** True once the node is shutting down: the upgrade is refused (503) or the new socket closed (1001). */
  closed(): boolean;
  /** Returns the reference taken for this upgrade when no WebSocket comes of it. */
  release(): void;
  /** The WebSocket is open. */
  register(ws: WebSocket): void;
}

/**
 * The tail that every accepted upgrade shares (instance sockets and the console stream): one
 * `noServer` WebSocketServer per consumer, the 101's headers, and a reference released whatever happens
 * to the handshake (`ws` answers a malformed one itself, 400/405/426, without calling back).
 */
export class UpgradeAcceptor {
  readonly #wss: WebSocketServer;
  readonly #headers = new WeakMap<IncomingMessage, Record<string, string>>();

  constructor(maxPayload: number) {
    this.#wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false, clientTracking: false });
    this.#wss.on('headers', (headers: string[], req: IncomingMessage) => {
      for (const [name, value] of Object.entries(this.#headers.get(req) ?? {})) headers.push(`${name}: ${value}`);
    });
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, upgrade: AcceptedUpgrade): void {
    if (upgrade.closed()) {
      upgrade.release();
      refuseUpgrade(socket, {
        status: 503,
        headers: upgrade.headers,
        body: jsonError(WsMessage.ShuttingDown, 'unavailable'),
      });
      return;
    }
    let registered = false;
    socket.once('close', () => {
      if (!registered) upgrade.release();
    });
    this.#headers.set(req, upgrade.headers);
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      registered = true;
      if (upgrade.closed()) {
        upgrade.release();
        ws.close(1001);
        return;
      }
      upgrade.register(ws);
    });
  }

  close(): void {
    this.#wss.close();
  }
}
