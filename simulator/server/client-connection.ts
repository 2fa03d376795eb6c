import { decodeBinaryNode, encodeBinaryNode } from '@whiskeysockets/baileys';
import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import type { WebSocket } from 'ws';
import type { CertAuthority } from '../wire/cert-chain.js';
import { FrameReader, NoiseResponder, encodeFrame } from '../wire/noise-server.js';
import type { Device, Endpoint } from './directory.js';

/**
 * A connection's life:
 * - `handshaking`: Noise messages, no stanza yet;
 * - `unpaired`: a new companion registered its keys and waits for a phone to link it (QR or code);
 * - `authenticated`: a linked device logged in; stanzas flow both ways;
 * - `closed`: gone (closed by either side, replaced, or refused).
 */
export type ConnectionState = 'handshaking' | 'unpaired' | 'authenticated' | 'closed';

export interface ConnectionHandler {
  /** The handshake finished: decide between registration and login. */
  onClientPayload(conn: ClientConnection, payload: proto.ClientPayload, clientStatic: Buffer): void;
  onNode(conn: ClientConnection, node: BinaryNode): void;
  onClose(conn: ClientConnection, reason: string): void;
}

let nextId = 1;

/** One WebSocket from a client (a node's Baileys socket): framing, Noise, then binary stanzas. */
export class ClientConnection implements Endpoint {
  readonly id = `c${nextId++}`;
  state: ConnectionState = 'handshaking';
  /** The device this connection logged in as (or registers as, once paired). */
  device: Device | undefined;
  /** The noise static key the client proved it holds. */
  clientStatic: Buffer | undefined;
  readonly connectedAt = Date.now();
  /** A "lost" connection: the simulator ignores it and answers nothing until it is destroyed. */
  blackholed = false;
  readonly #reader = new FrameReader();
  readonly #noise = new NoiseResponder();
  #handshakeStep: 'hello' | 'finish' | 'done' = 'hello';
  #inbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    private readonly certs: CertAuthority,
    private readonly handler: ConnectionHandler,
    readonly node: string | undefined,
    readonly remote: string,
  ) {
    ws.on('message', (data: Buffer) => this.#onData(data));
    ws.on('close', () => this.#closed('closed by the client'));
    ws.on('error', () => this.#closed('socket error'));
  }

  #onData(data: Buffer): void {
    if (this.blackholed || this.state === 'closed') return;
    let frames: Buffer[];
    try {
      frames = this.#reader.push(data);
    } catch {
      this.destroy('bad framing');
      return;
    }
    for (const frame of frames) {
      // Stanzas are decoded asynchronously; a chain keeps them in arrival order.
      this.#inbound = this.#inbound.then(() => this.#onFrame(frame)).catch(() => this.destroy('bad frame'));
    }
  }

  async #onFrame(frame: Buffer): Promise<void> {
    if (this.state === 'closed' || this.blackholed) return;
    if (this.#handshakeStep === 'hello') {
      this.ws.send(encodeFrame(this.#noise.serverHello(frame, this.certs.serverStatic, this.certs.chain)));
      this.#handshakeStep = 'finish';
      return;
    }
    if (this.#handshakeStep === 'finish') {
      const { clientStatic, payload } = this.#noise.clientFinish(frame);
      this.#handshakeStep = 'done';
      this.clientStatic = clientStatic;
      this.handler.onClientPayload(this, payload, clientStatic);
      return;
    }
    const node = await decodeBinaryNode(this.#noise.decryptFrame(frame));
    this.handler.onNode(this, node);
  }

  send(node: BinaryNode): void {
    if (this.state === 'closed' || this.blackholed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(encodeFrame(this.#noise.encryptFrame(encodeBinaryNode(node))));
  }

  /** Sends a stream error and closes, as WhatsApp does (440 conflict, 515 restart, 401, 503...). */
  streamError(code: number | undefined, child?: BinaryNode): void {
    this.send({
      tag: 'stream:error',
      attrs: code ? { code: String(code) } : {},
      ...(child ? { content: [child] } : {}),
    });
    this.close(`stream error ${code ?? child?.tag ?? ''}`.trim());
  }

  /** Refuses a login: `<failure reason>` then close. */
  failure(reason: number): void {
    this.send({ tag: 'failure', attrs: { reason: String(reason), location: 'sim' } });
    this.close(`failure ${reason}`);
  }

  close(reason: string): void {
    if (this.state === 'closed') return;
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    this.#closed(reason);
  }

  /** Drops the socket without a close handshake (a lost connection on the client's side). */
  destroy(reason: string): void {
    if (this.state === 'closed') return;
    this.ws.terminate();
    this.#closed(reason);
  }

  #closed(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.handler.onClose(this, reason);
  }
}
