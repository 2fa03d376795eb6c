import { DisconnectReason, WA_CERT_DETAILS, initAuthCreds, makeWASocket } from '@whiskeysockets/baileys';
import type { AuthenticationState, ConnectionState, SignalDataSet, WAMessage, WASocket } from '@whiskeysockets/baileys';
import { Agent as HttpsAgent } from 'node:https';
import { pino } from 'pino';
import { Agent } from 'undici';
import type { TestSimulator } from './simulator.js';

/**
 * A bare Baileys socket (no node around it) linked to a simulator phone: for testing the simulator
 * itself against the client it must satisfy. Its credentials live in memory, so it can reconnect,
 * and a second one can be started on the same credentials (a second login).
 */
export class RawBaileys {
  readonly creds = initAuthCreds();
  readonly #keys = new Map<string, unknown>();
  readonly updates: Partial<ConnectionState>[] = [];
  readonly messages: WAMessage[] = [];
  /** Status codes of every close, in order. */
  readonly closes: number[] = [];
  sock: WASocket | undefined;
  /** Reconnect on 515 (restart required) only, as after linking. */
  autoRestart = true;
  /** History the phone gave at the first login (`messaging-history.set`). */
  readonly history: { contacts: number; chats: number; messages: number }[] = [];

  constructor(
    private readonly sim: TestSimulator,
    private readonly options: { syncFullHistory?: boolean } = {},
  ) {}

  get auth(): AuthenticationState {
    return {
      creds: this.creds,
      keys: {
        get: (type, ids) =>
          Object.fromEntries(ids.map((id) => [id, this.#keys.get(`${type}/${id}`)]).filter(([, v]) => v !== undefined)),
        set: (data: SignalDataSet) => {
          for (const [t, values] of Object.entries(data)) {
            for (const [id, v] of Object.entries(values ?? {})) {
              if (v === null || v === undefined) this.#keys.delete(`${t}/${id}`);
              else this.#keys.set(`${t}/${id}`, v);
            }
          }
        },
      },
    };
  }

  /** Starts a socket; a second RawBaileys may share this one's `auth` to log in as the same device. */
  start(auth: AuthenticationState = this.auth): WASocket {
    const ca = this.sim.nodeEnv.WHATSAPP_MEDIA_CA;
    // What a node does with WHATSAPP_CERT_ROOT (one root per process; the test run shares one).
    WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(this.sim.nodeEnv.WHATSAPP_CERT_ROOT, 'hex');
    const sock = makeWASocket({
      auth,
      logger: pino({ level: process.env.TEST_BAILEYS_LOG ?? 'silent' }),
      waWebSocketUrl: this.sim.nodeEnv.WHATSAPP_WS_URL,
      markOnlineOnConnect: false,
      syncFullHistory: this.options.syncFullHistory ?? false,
      fetchAgent: new HttpsAgent({ ca }),
      options: { dispatcher: new Agent({ connect: { ca } }) } as never,
    });
    this.sock = sock;
    sock.ev.on('creds.update', (u) => Object.assign(auth.creds, u));
    sock.ev.on('messages.upsert', ({ messages }) => this.messages.push(...messages));
    sock.ev.on('messaging-history.set', ({ contacts, chats, messages }) =>
      this.history.push({ contacts: contacts.length, chats: chats.length, messages: messages.length }),
    );
    sock.ev.on('connection.update', (u) => {
      this.updates.push(u);
      if (u.connection !== 'close') return;
      const code =
        (u.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode ?? 0;
      this.closes.push(code);
      if (code === Number(DisconnectReason.restartRequired) && this.autoRestart && this.sock === sock) this.start(auth);
    });
    return sock;
  }

  /** The first QR the socket shows. */
  async qr(timeoutMs = 10_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const qr = this.updates.find((u) => u.qr)?.qr;
      if (qr) return qr;
      if (Date.now() > end) throw new Error('no QR');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  get open(): boolean {
    const last = [...this.updates].reverse().find((u) => u.connection);
    return last?.connection === 'open';
  }

  async end(): Promise<void> {
    const sock = this.sock;
    this.sock = undefined;
    await sock?.end(undefined);
  }
}
