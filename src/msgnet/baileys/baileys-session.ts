import { NotConnectedError } from '../../errors.js';
import type { ConnectionState } from '../../store/records.js';
import type { LinkChallenge, LinkRequest, MsgNetSession, SessionOptions } from '../msgnet-driver.js';
import { BaileysCalls } from './baileys-calls.js';
import { BaileysChannels } from './baileys-channels.js';
import { BaileysChats } from './baileys-chats.js';
import { BaileysCommunities } from './baileys-communities.js';
import { BaileysGroups } from './baileys-groups.js';
import { BaileysLabels } from './baileys-labels.js';
import { BaileysMessages } from './baileys-messages.js';
import { BaileysPrivacy } from './baileys-privacy.js';
import { BaileysProfiles } from './baileys-profiles.js';
import { BaileysStatus } from './baileys-status.js';
import { ConnectionManager } from './connection-manager.js';
import type { BaileysSessionDeps } from './connection-manager.js';
import { digitsOf } from './jids.js';

export type { BaileysSessionDeps };

/**
 * One instance's link to WhatsApp through Baileys, on its owner node: the `MsgNetSession` API over the
 * socket its `ConnectionManager` keeps, persisting the link only through the fenced `AuthStore`.
 */
export class BaileysSession implements MsgNetSession {
  readonly #conn: ConnectionManager;
  readonly messages: BaileysMessages;
  readonly profile: BaileysProfiles;
  readonly privacy: BaileysPrivacy;
  readonly labels: BaileysLabels;
  readonly status: BaileysStatus;
  readonly calls: BaileysCalls;
  readonly groups: BaileysGroups;
  readonly chats: BaileysChats;
  readonly channels: BaileysChannels;
  readonly communities: BaileysCommunities;

  constructor(
    o: SessionOptions,
    deps: BaileysSessionDeps,
    /** Told once the session has closed (the driver forgets it). */
    private readonly onClosed?: () => void,
  ) {
    // The actor's logger is bound to the instance already: one binding per key in a line.
    const log = o.log.child({ driver: 'baileys' });
    const conn = new ConnectionManager(o, deps, log);
    this.#conn = conn;
    const socket = () => conn.socket();
    this.messages = new BaileysMessages(conn, deps, log);
    this.profile = new BaileysProfiles(socket);
    this.privacy = new BaileysPrivacy(socket);
    this.labels = new BaileysLabels(conn);
    this.status = new BaileysStatus(conn);
    this.calls = new BaileysCalls(conn);
    this.groups = new BaileysGroups(socket, (group) => conn.groupCache.set(group.id, group));
    this.chats = new BaileysChats(socket, async () => (await this.#conn.ensureLink()).contacts);
    this.channels = new BaileysChannels(socket, async () => (await this.#conn.ensureLink()).auth);
    this.communities = new BaileysCommunities(socket, (group) => conn.groupCache.set(group.id, group));
  }

  get state(): ConnectionState {
    return this.#conn.state;
  }

  get numberJid(): string | undefined {
    return this.#conn.numberJid;
  }

  async resume(): Promise<void> {
    this.#conn.assertUsable();
    const link = await this.#conn.ensureLink();
    if (link.auth.registered && !this.#conn.hasSocket && !this.#conn.closed) this.#conn.requestLogin();
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    const conn = this.#conn;
    conn.assertUsable();
    const link = await conn.ensureLink();
    if (conn.state === 'connected' && conn.hasSocket && conn.numberJid) {
      return { status: 'connected', numberJid: conn.numberJid };
    }
    // Only a new link syncs history: the days it asks for apply to the socket about to register.
    if (!link.auth.registered && request.historyDays !== undefined) conn.historyDays = request.historyDays;
    // A linked device logs in (paced, ahead of the reconnecting ones); a new one registers at once.
    if (!conn.hasSocket && !(link.auth.registered ? conn.requestLogin(true) : conn.startSocket())) {
      throw new NotConnectedError();
    }
    conn.hurry();
    const outcome = await conn.waitLink();
    if (outcome.kind === 'open') return { status: 'connected', numberJid: conn.numberJid! };
    if (request.method === 'qr') return { status: 'qr', qrCode: outcome.qr };
    // The first QR proves the socket is up; only then does the server accept a pairing request.
    const sock = conn.currentSocket();
    if (!sock) throw new NotConnectedError();
    const pairingCode = await sock.requestPairingCode(digitsOf(request.phoneNumber));
    return { status: 'pairing', pairingCode };
  }

  async logout(): Promise<void> {
    if (this.#conn.closed) return;
    await this.#conn.logout((sock) => sock.logout());
  }

  async reconnect(): Promise<void> {
    this.#conn.assertUsable();
    await this.#conn.ensureLink();
    this.#conn.resetBackoff();
    if (!this.#conn.requestLogin(true)) throw new NotConnectedError();
  }

  async close(): Promise<void> {
    if (this.#conn.closed) return;
    await this.#conn.close();
    this.onClosed?.();
  }
}
