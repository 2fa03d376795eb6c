import pino from 'pino';
import type { Logger } from 'pino';
import { ControlApi } from './control/control-api.js';
import { MediaServer, MediaStore } from './media/media-server.js';
import { makeSelfSignedCert } from './media/self-signed-cert.js';
import type { AddressBookSize } from './phone/address-book.js';
import { Phone } from './phone/phone.js';
import { mintCertAuthority } from './wire/cert-chain.js';
import type { CertAuthority } from './wire/cert-chain.js';
import { SimCore } from './server/sim-core.js';
import { CHAT_PATH, WaServer } from './server/wa-server.js';

export interface SimulatorOptions {
  /** WebSocket port (0 = any free port). @default 0 */
  port?: number;
  /** Control API port (0 = any free port). @default 0 */
  httpPort?: number;
  /** Media (HTTPS) port. @default 0 */
  mediaPort?: number;
  /** @default 127.0.0.1 */
  host?: string;
  /** Logins per second before 429 (0 = no limit). @default 0 */
  loginsPerSecond?: number;
  /** @default a silent logger */
  logger?: Logger;
  /**
   * The noise certificate authority; a fresh one by default. A process that runs several simulators
   * one after another (a test run) passes one, since a node trusts one root per process.
   */
  certs?: CertAuthority;
}

/** The environment a node needs to use this simulator (what `GET /node-env` answers). */
export interface NodeEnv {
  MSGNET_DRIVER: 'baileys';
  WHATSAPP_WS_URL: string;
  WHATSAPP_CERT_ROOT: string;
  WHATSAPP_MEDIA_CA: string;
}

/** A running simulator: the WhatsApp socket, the media endpoint and the control API. */
export class Simulator {
  readonly core: SimCore;
  readonly server: WaServer;
  readonly media: MediaServer;
  readonly control: ControlApi;
  readonly logger: Logger;
  wsUrl = '';
  httpUrl = '';
  mediaUrl = '';
  #nodeEnv: NodeEnv | undefined;

  constructor(private readonly options: SimulatorOptions = {}) {
    this.logger = options.logger ?? pino({ level: 'silent' });
    const certs = options.certs ?? mintCertAuthority();
    const tls = makeSelfSignedCert();
    this.core = new SimCore('127.0.0.1:0');
    this.server = new WaServer(this.core, certs);
    const store = new MediaStore();
    this.media = new MediaServer(store, tls, (path) => {
      const number = path.split('/')[2] ?? '';
      return this.core.directory.byNumber(number)?.picture;
    });
    this.control = new ControlApi(this);
    this.#nodeEnv = {
      MSGNET_DRIVER: 'baileys',
      WHATSAPP_WS_URL: '',
      WHATSAPP_CERT_ROOT: certs.rootPublicKeyHex,
      WHATSAPP_MEDIA_CA: tls.cert,
    };
    if (options.loginsPerSecond) this.server.limiter.set(options.loginsPerSecond);
  }

  async start(): Promise<this> {
    const host = this.options.host ?? '127.0.0.1';
    const wsPort = await this.server.listen(this.options.port ?? 0, host);
    const mediaPort = await this.media.listen(this.options.mediaPort ?? 0, host);
    const httpPort = await this.control.listen(this.options.httpPort ?? 0, host);
    this.core.mediaHost = `${host}:${mediaPort}`;
    this.wsUrl = `ws://${host}:${wsPort}${CHAT_PATH}`;
    this.httpUrl = `http://${host}:${httpPort}`;
    this.mediaUrl = `https://${host}:${mediaPort}`;
    this.#nodeEnv!.WHATSAPP_WS_URL = this.wsUrl;
    return this;
  }

  get nodeEnv(): NodeEnv {
    return { ...this.#nodeEnv! };
  }

  /** A new phone number with its phone (`number` optional). */
  addPhone(number?: string, name?: string, book?: AddressBookSize): Phone {
    const account = this.core.directory.create(number);
    if (name) account.pushName = name;
    const log = this.logger.child({ phone: account.number });
    return new Phone(account, this.core, this.server, this.media.store, log, book);
  }

  phone(number: string): Phone | undefined {
    return this.core.phones.get(number) as Phone | undefined;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.control.close(), this.server.close(), this.media.close()]);
  }
}

/** Starts a simulator on free ports (or those given) and answers its addresses. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<{
  wsUrl: string;
  httpUrl: string;
  mediaUrl: string;
  nodeEnv: NodeEnv;
  simulator: Simulator;
  close: () => Promise<void>;
}> {
  const simulator = await new Simulator(options).start();
  return {
    wsUrl: simulator.wsUrl,
    httpUrl: simulator.httpUrl,
    mediaUrl: simulator.mediaUrl,
    nodeEnv: simulator.nodeEnv,
    simulator,
    close: () => simulator.close(),
  };
}
