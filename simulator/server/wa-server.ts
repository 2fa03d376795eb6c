import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { CertAuthority } from '../wire/cert-chain.js';
import { AppStateStore } from './app-state-store.js';
import { ClientConnection } from './client-connection.js';
import type { ConnectionHandler } from './client-connection.js';
import type { Device, Endpoint } from './directory.js';
import { FAULT_KINDS, FaultScheduler, LoginLimiter } from './faults.js';
import type { FaultKind, FaultOutcome, FaultSchedule } from './faults.js';
import { groupIq } from './group-iq.js';
import {
  appStateIq,
  blocklistIq,
  encryptIq,
  mediaConnIq,
  pictureIq,
  privacyIq,
  statusIq,
  usyncIq,
} from './iq-handlers.js';
import type { IqContext } from './iq-handlers.js';
import { handleAck, relayMessage, routeCall, routeChatstate, routePresence, routeReceipt } from './message-relay.js';
import { PairingDesk } from './pairing-desk.js';
import type { SimCore } from './sim-core.js';
import { SERVER_JID, child, iqError, iqResult, unixNow } from './stanzas.js';

/** The path WhatsApp Web's socket opens. */
export const CHAT_PATH = '/ws/chat';

/** How late the `slow` fault answers a device's queries, unless told. */
const SLOW_QUERY_MS = 1000;

/**
 * The WhatsApp server side: accepts sockets, runs the handshake, registers or logs devices in (one
 * connection per device: a second login replaces the first), and routes every stanza.
 */
export class WaServer implements ConnectionHandler {
  readonly pairing: PairingDesk;
  readonly appState = new AppStateStore();
  readonly limiter = new LoginLimiter();
  readonly scheduler: FaultScheduler;
  readonly #connections = new Set<ClientConnection>();
  /** Companions that have logged in at least once (the phone shares history at the first). */
  readonly #seen = new WeakSet<Device>();
  #refuseLoginsUntil = 0;
  /** Devices whose next queries are answered late (the `slow` fault): how late, and how many more. */
  readonly #slowQueries = new Map<Device, { delayMs: number; left: number }>();
  #http: Server | undefined;
  #wss: WebSocketServer | undefined;

  constructor(
    readonly core: SimCore,
    private readonly certs: CertAuthority,
  ) {
    this.pairing = new PairingDesk(core);
    this.scheduler = new FaultScheduler(
      () => this.connectedCompanions(),
      (kind, device) => this.inject(kind, device),
    );
  }

  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    const http = createServer((_req, res) => {
      res.writeHead(426).end('upgrade required');
    });
    const wss = new WebSocketServer({ noServer: true });
    http.on('upgrade', (req, socket, head) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== CHAT_PATH) {
        socket.destroy();
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, req));
    });
    this.#http = http;
    this.#wss = wss;
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, host, () => resolve());
    });
    return (http.address() as AddressInfo).port;
  }

  #accept(ws: WebSocket, req: IncomingMessage): void {
    // Labels a node may give its connections, recorded for the observer (WhatsApp ignores extra headers).
    const label = req.headers['x-switchboard-node'];
    const node = typeof label === 'string' && label.length <= 128 ? label : undefined;
    const epochHeader = req.headers['x-switchboard-epoch'];
    const epoch = typeof epochHeader === 'string' && /^\d{1,15}$/.test(epochHeader) ? Number(epochHeader) : undefined;
    const remote = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? 0}`;
    const conn = new ClientConnection(ws, this.certs, this, node, remote);
    this.#connections.add(conn);
    this.core.log.add({
      kind: 'connect',
      connection: conn.id,
      ...(node ? { node } : {}),
      ...(epoch !== undefined ? { epoch } : {}),
      remote,
    });
  }

  async close(): Promise<void> {
    this.scheduler.stop();
    for (const conn of this.#connections) conn.destroy('simulator closing');
    this.#wss?.close();
    await new Promise<void>((resolve) => (this.#http ? this.#http.close(() => resolve()) : resolve()));
    this.#http?.closeAllConnections();
  }

  // ---- connection lifecycle ----

  onClientPayload(conn: ClientConnection, payload: proto.ClientPayload, clientStatic: Buffer): void {
    if (payload.username !== undefined && payload.username !== null && !payload.devicePairingData) {
      this.#login(conn, String(payload.username), payload.device ?? 0, clientStatic);
      return;
    }
    if (payload.devicePairingData) {
      conn.state = 'unpaired';
      this.pairing.register(conn, payload);
      return;
    }
    conn.failure(400);
  }

  #login(conn: ClientConnection, number: string, deviceId: number, clientStatic: Buffer): void {
    const device = this.core.directory.byNumber(number)?.devices.get(deviceId);
    const refuse = (reason: number, why: string): void => {
      this.core.log.add({
        kind: 'login-refused',
        device: device?.pnJid ?? `${number}:${deviceId}@s.whatsapp.net`,
        connection: conn.id,
        ...(conn.node ? { node: conn.node } : {}),
        reason,
        why,
      });
      conn.failure(reason);
    };
    if (!device?.linked) return refuse(401, 'not a linked device');
    if (device.noiseKey && !device.noiseKey.equals(clientStatic)) return refuse(401, 'wrong noise key');
    if (Date.now() < this.#refuseLoginsUntil) return refuse(503, 'restarting');
    if (!this.limiter.take()) return refuse(429, 'rate-overlimit');
    const previous = device.endpoint;
    if (previous instanceof ClientConnection && previous !== conn) {
      this.core.log.add({
        kind: 'replaced',
        device: device.pnJid,
        connection: previous.id,
        ...(previous.node ? { node: previous.node } : {}),
        by: conn.id,
        ...(conn.node ? { byNode: conn.node } : {}),
      });
      device.endpoint = undefined;
      previous.streamError(undefined, { tag: 'conflict', attrs: { type: 'replaced' } });
    }
    conn.device = device;
    conn.state = 'authenticated';
    device.endpoint = conn;
    this.core.log.add({
      kind: 'login',
      device: device.pnJid,
      connection: conn.id,
      ...(conn.node ? { node: conn.node } : {}),
    });
    conn.send({
      tag: 'success',
      attrs: {
        t: unixNow(),
        lid: device.lidJid,
        creation: String(Math.floor(device.linkedAt / 1000)),
        location: 'sim',
        props: '1',
        abprops: '1',
      },
    });
    const first = !this.#seen.has(device);
    this.#seen.add(device);
    // After `success`, as WhatsApp does: what waited while the device was away, then the count.
    setImmediate(() => {
      if (device.endpoint !== conn) return;
      if (first) this.core.phones.get(device.account.number)?.onCompanionFirstLogin(device);
      const count = this.core.queues.flush(device);
      conn.send({ tag: 'ib', attrs: {}, content: [{ tag: 'offline', attrs: { count: String(count) } }] });
    });
  }

  onClose(conn: ClientConnection, reason: string): void {
    this.#connections.delete(conn);
    this.pairing.forget(conn);
    const device = conn.device;
    if (device?.endpoint === conn) device.endpoint = undefined;
    this.core.log.add({
      kind: 'disconnect',
      ...(device ? { device: device.pnJid } : {}),
      connection: conn.id,
      ...(conn.node ? { node: conn.node } : {}),
      reason,
    });
  }

  onNode(conn: ClientConnection, node: BinaryNode): void {
    if (conn.state === 'unpaired') {
      this.#unpairedNode(conn, node);
      return;
    }
    if (conn.state !== 'authenticated' || !conn.device || conn.device.endpoint !== conn) return;
    this.dispatch(conn.device, conn, node);
  }

  #unpairedNode(conn: ClientConnection, node: BinaryNode): void {
    if (node.tag !== 'iq') return;
    if (child(node, 'pair-device-sign')) {
      const phone = conn.device ? this.core.phones.get(conn.device.account.number) : undefined;
      if (phone) this.pairing.onPairDeviceSign(conn, node, phone.accountKey);
      return;
    }
    if (node.attrs.xmlns === 'md' && child(node, 'link_code_companion_reg')) {
      conn.send(this.pairing.onLinkCodeIq(conn, node));
    }
  }

  // ---- routing (connections and phones alike) ----

  /** Routes one stanza a device sent, whether over a socket or from a phone in this process. */
  dispatch(device: Device, endpoint: Endpoint, node: BinaryNode): void {
    switch (node.tag) {
      case 'iq': {
        if (node.attrs.type === 'result' || node.attrs.type === 'error') return;
        const slow = this.#slowQueries.get(device);
        if (slow && --slow.left <= 0) this.#slowQueries.delete(device);
        const answer = () => endpoint.send(this.#iq({ core: this.core, device, endpoint }, node));
        if (slow) setTimeout(answer, slow.delayMs).unref();
        else answer();
        return;
      }
      case 'message':
        relayMessage(this.core, device, endpoint, node);
        return;
      case 'receipt':
        routeReceipt(this.core, device, endpoint, node);
        return;
      case 'ack':
        handleAck(this.core, device, endpoint, node);
        return;
      case 'call':
        routeCall(this.core, device, endpoint, node);
        return;
      case 'presence':
        routePresence(this.core, device, endpoint, node);
        return;
      case 'chatstate':
        routeChatstate(this.core, device, endpoint, node);
        return;
      default:
        return;
    }
  }

  #iq(ctx: IqContext, iq: BinaryNode): BinaryNode {
    switch (iq.attrs.xmlns) {
      case 'w:p':
      case 'passive':
      case 'urn:xmpp:whatsapp:dirty':
      case 'w:stats':
      case 'disappearing_mode':
        return iqResult(iq);
      case 'encrypt':
        return encryptIq(ctx, iq);
      case 'usync':
        return usyncIq(ctx, iq);
      case 'abt':
        return iqResult(iq, [{ tag: 'props', attrs: { protocol: '1', hash: 'sim' } }]);
      case 'blocklist':
        return blocklistIq(ctx, iq);
      case 'privacy':
        return privacyIq(ctx, iq);
      case 'w:m':
        return mediaConnIq(ctx, iq);
      case 'w:g2':
        return groupIq(ctx, iq);
      case 'w:sync:app:state':
        return appStateIq(ctx, iq, this.appState);
      case 'status':
        return statusIq(ctx, iq);
      case 'w:profile:picture':
        return pictureIq(ctx, iq);
      case 'md':
        return this.#mdIq(ctx, iq);
      default:
        this.core.log.add({
          kind: 'iq',
          device: ctx.device.pnJid,
          connection: ctx.endpoint.id,
          xmlns: iq.attrs.xmlns,
          unanswered: true,
        });
        return iqError(iq, 501, 'feature-not-implemented');
    }
  }

  #mdIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
    const remove = child(iq, 'remove-companion-device');
    if (remove) {
      const target = this.core.directory.device(remove.attrs.jid);
      if (target && target.account === ctx.device.account && target.id !== 0) {
        this.unlink(target, 'logged out by the companion', false);
      }
      return iqResult(iq);
    }
    return iqError(iq, 501, 'feature-not-implemented');
  }

  /** Removes a companion: its queue is dropped and, if connected and asked, it is told (401). */
  unlink(device: Device, why: string, tell: boolean): boolean {
    if (device.id === 0 || !device.linked) return false;
    device.linked = false;
    device.keys = undefined;
    this.core.queues.drop(device);
    const endpoint = device.endpoint;
    device.endpoint = undefined;
    this.core.log.add({
      kind: 'unlinked',
      device: device.pnJid,
      why,
      ...(endpoint ? { connection: endpoint.id } : {}),
    });
    if (tell && endpoint instanceof ClientConnection) {
      endpoint.streamError(401, { tag: 'conflict', attrs: { type: 'device_removed' } });
    }
    return true;
  }

  // ---- faults ----

  connectedCompanions(): Device[] {
    const out: Device[] = [];
    for (const conn of this.#connections) {
      if (conn.state === 'authenticated' && conn.device && conn.device.id !== 0 && conn.device.endpoint === conn) {
        out.push(conn.device);
      }
    }
    return out;
  }

  /** Applies one fault to a device's current connection (`restart` hits every connection). */
  inject(
    kind: FaultKind,
    device?: Device,
    options: { downMs?: number; count?: number; delayMs?: number } = {},
  ): FaultOutcome {
    if (!FAULT_KINDS.includes(kind)) return { kind, applied: false, detail: 'unknown fault' };
    if (kind === 'restart') {
      this.#refuseLoginsUntil = Date.now() + (options.downMs ?? 0);
      const n = this.#connections.size;
      for (const conn of [...this.#connections]) {
        if (conn.state === 'closed') continue;
        conn.streamError(503);
      }
      this.core.log.add({ kind: 'fault', fault: kind, connections: n, downMs: options.downMs ?? 0 });
      return { kind, applied: true, detail: `${n} connections` };
    }
    if (!device) return { kind, applied: false, detail: 'a device is needed' };
    const conn = device.endpoint instanceof ClientConnection ? device.endpoint : undefined;
    const base = { kind, device: device.pnJid, ...(conn ? { connection: conn.id } : {}) };
    this.core.log.add({ kind: 'fault', fault: kind, device: device.pnJid, ...(conn ? { connection: conn.id } : {}) });
    switch (kind) {
      case 'logout':
        return { ...base, applied: this.unlink(device, 'logged out by the phone', true) };
      case 'duplicate':
        this.core.queues.duplicateNext(device, options.count ?? 1);
        return { ...base, applied: true };
      case 'slow':
        // A busy WhatsApp: the device's next queries (a login's pre-key count and presence among them) wait.
        this.#slowQueries.set(device, { delayMs: options.delayMs ?? SLOW_QUERY_MS, left: options.count ?? 5 });
        return { ...base, applied: true };
      default:
        break;
    }
    if (!conn) return { ...base, applied: false, detail: 'not connected' };
    if (kind === 'replaced') {
      device.endpoint = undefined;
      conn.streamError(undefined, { tag: 'conflict', attrs: { type: 'replaced' } });
    } else if (kind === 'close') {
      conn.close('closed by the server');
    } else {
      // Lost: nothing more is read or sent; the client finds out by its own keep-alive.
      conn.blackholed = true;
      device.endpoint = undefined;
      setTimeout(() => conn.destroy('lost'), 120_000).unref();
    }
    return { ...base, applied: true };
  }

  startSchedule(schedule: FaultSchedule): void {
    this.scheduler.start(schedule);
  }
}

export { SERVER_JID };
