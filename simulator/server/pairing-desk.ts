import { randomBytes } from 'node:crypto';
import { Curve, WA_ADV_ACCOUNT_SIG_PREFIX, WA_ADV_DEVICE_SIG_PREFIX, hmacSign, proto } from '@whiskeysockets/baileys';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { Account, Device } from './directory.js';
import type { SimCore } from './sim-core.js';
import { SERVER_JID, bytesOf, child, iqResult, readBigEndian, unixNow } from './stanzas.js';

/** How many QR refs a registering companion is given (Baileys shows one per QR, 60 s then 20 s each). */
const QR_REFS = 6;

/** What a registering companion told the server about itself (its ClientPayload's pairing data). */
export interface Registration {
  registrationId: number;
  identity: Buffer;
  signedPreKey: { id: number; publicKey: Buffer; signature: Buffer };
  platform: string;
  /** The companion asked for its full history (Baileys' syncFullHistory; a node's disableHistorySync off). */
  requireFullSync: boolean;
}

/** A companion asking to be linked by code: its wrapped ephemeral key waits for the phone's typed code. */
export interface CodeRequest {
  conn: ClientConnection;
  ref: string;
  wrappedEphemeral: Buffer;
  platformName: string;
  finish: Promise<{ wrappedBundle: Buffer; companionIdentity: Buffer }>;
  resolveFinish(v: { wrappedBundle: Buffer; companionIdentity: Buffer }): void;
}

/** The phone's signature over a companion's device identity (ADV), made with the account key. */
export type AccountSigner = (message: Buffer) => { key: Buffer; signature: Buffer };

/**
 * Linking a new companion: QR refs for a registering connection, pairing-code requests, the
 * `pair-success` the phone's scan produces, the companion's counter-signature, and the 515 restart
 * after which the companion logs in with its saved credentials.
 */
export class PairingDesk {
  readonly #registrations = new Map<ClientConnection, Registration>();
  readonly #refs = new Map<string, ClientConnection>();
  readonly #codes = new Map<string, CodeRequest>();
  /** Companions sent `pair-success` and not yet counter-signed: connection → device. */
  readonly #awaitingSign = new Map<ClientConnection, Device>();

  constructor(private readonly core: SimCore) {}

  /** A new companion registered: remember its keys and give it QR refs. */
  register(conn: ClientConnection, payload: proto.ClientPayload): void {
    const data = payload.devicePairingData;
    if (!data?.eIdent || !data.eSkeyVal || !data.eSkeySig || !data.eRegid || !data.eSkeyId) {
      conn.failure(400);
      return;
    }
    let platform = 'web';
    let requireFullSync = false;
    try {
      const props = proto.DeviceProps.decode(data.deviceProps ?? new Uint8Array());
      platform = props.os ?? platform;
      requireFullSync = props.requireFullSync ?? false;
    } catch {
      // An unreadable DeviceProps leaves the platform unknown; linking still works.
    }
    this.#registrations.set(conn, {
      registrationId: readBigEndian(Buffer.from(data.eRegid)) ?? 0,
      identity: Buffer.from(data.eIdent),
      signedPreKey: {
        id: readBigEndian(Buffer.from(data.eSkeyId)) ?? 0,
        publicKey: Buffer.from(data.eSkeyVal),
        signature: Buffer.from(data.eSkeySig),
      },
      platform,
      requireFullSync,
    });
    const refs: BinaryNode[] = [];
    for (let i = 0; i < QR_REFS; i++) {
      const ref = `2@${randomBytes(36).toString('base64')}`;
      this.#refs.set(ref, conn);
      refs.push({ tag: 'ref', attrs: {}, content: Buffer.from(ref) });
    }
    conn.send({
      tag: 'iq',
      attrs: { id: randomBytes(6).toString('hex'), type: 'set', from: SERVER_JID, xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: refs }],
    });
  }

  /** The registering connection a QR's ref belongs to (the QR text starts with it after the `#`). */
  connectionForQr(qr: string): ClientConnection | undefined {
    const data = qr.includes('#') ? qr.slice(qr.indexOf('#') + 1) : qr;
    const ref = data.split(',')[0] ?? '';
    const conn = this.#refs.get(ref);
    return conn && conn.state === 'unpaired' ? conn : undefined;
  }

  registration(conn: ClientConnection): Registration | undefined {
    return this.#registrations.get(conn);
  }

  /** `md` iq `link_code_companion_reg`: a code request (companion_hello) or its finish. */
  onLinkCodeIq(conn: ClientConnection, iq: BinaryNode): BinaryNode {
    const reg = child(iq, 'link_code_companion_reg');
    const stage = reg?.attrs.stage;
    if (stage === 'companion_hello') {
      const number = (reg?.attrs.jid ?? '').split('@')[0]?.split(':')[0] ?? '';
      const wrapped = bytesOf(child(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
      if (!wrapped || !this.core.directory.byNumber(number)) {
        return iqResult(iq, [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }], { type: 'error' });
      }
      const ref = randomBytes(16).toString('hex');
      let resolveFinish!: CodeRequest['resolveFinish'];
      const finish = new Promise<{ wrappedBundle: Buffer; companionIdentity: Buffer }>((r) => (resolveFinish = r));
      this.#codes.set(number, {
        conn,
        ref,
        wrappedEphemeral: wrapped,
        platformName: (bytesOf(child(reg, 'companion_platform_display')) ?? Buffer.alloc(0)).toString(),
        finish,
        resolveFinish,
      });
      return iqResult(iq, [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }],
        },
      ]);
    }
    if (stage === 'companion_finish') {
      const ref = bytesOf(child(reg, 'link_code_pairing_ref'))?.toString();
      const wrappedBundle = bytesOf(child(reg, 'link_code_pairing_wrapped_key_bundle'));
      const companionIdentity = bytesOf(child(reg, 'companion_identity_public'));
      const request = [...this.#codes.values()].find((r) => r.ref === ref && r.conn === conn);
      if (request && wrappedBundle && companionIdentity) request.resolveFinish({ wrappedBundle, companionIdentity });
      return iqResult(iq);
    }
    return iqResult(iq, [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }], { type: 'error' });
  }

  /** The code request waiting for this number's phone, if the companion is still connected. */
  codeRequest(number: string): CodeRequest | undefined {
    const request = this.#codes.get(number);
    return request && request.conn.state === 'unpaired' ? request : undefined;
  }

  forgetCode(number: string): void {
    this.#codes.delete(number);
  }

  /**
   * Links the registering connection as a new companion of `account`: the device is created with the
   * keys it registered, and `pair-success` carries its identity signed by the phone's account key
   * and authenticated with the ADV secret (the QR's, or the one the code exchange derived).
   */
  link(account: Account, conn: ClientConnection, advSecret: Buffer, sign: AccountSigner): Device {
    const reg = this.#registrations.get(conn);
    if (!reg || conn.state !== 'unpaired') throw new Error('that companion is not waiting to be linked');
    const device = account.addCompanion();
    device.keys = {
      registrationId: reg.registrationId,
      identity: reg.identity,
      signedPreKey: reg.signedPreKey,
      preKeys: new Map(),
    };
    device.noiseKey = conn.clientStatic;
    device.platform = reg.platform;
    device.requireFullSync = reg.requireFullSync;
    device.linked = false;
    const details = Buffer.from(
      proto.ADVDeviceIdentity.encode({
        rawId: device.id,
        timestamp: Math.floor(Date.now() / 1000),
        keyIndex: device.keyIndex,
      }).finish(),
    );
    const { key, signature } = sign(Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, reg.identity]));
    const signed = Buffer.from(
      proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: key, accountSignature: signature }).finish(),
    );
    const hmac = hmacSign(signed, advSecret);
    const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish();
    this.#awaitingSign.set(conn, device);
    conn.device = device;
    conn.send({
      tag: 'iq',
      attrs: { id: randomBytes(6).toString('hex'), type: 'set', from: SERVER_JID, t: unixNow() },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: { 'key-index': String(device.keyIndex) }, content: identity },
            // The phone's app: WhatsApp Business on Android ("smba") names the business, WhatsApp does not.
            { tag: 'platform', attrs: { name: account.business ? 'smba' : 'android' } },
            ...(account.business ? [{ tag: 'biz', attrs: { name: account.business.name } }] : []),
            { tag: 'device', attrs: { jid: device.pnJid, lid: device.lidJid } },
          ],
        },
      ],
    });
    return device;
  }

  /**
   * The companion's answer to `pair-success`: its device signature over the identity. Once it checks,
   * the device is linked and the connection is told to restart (515), as WhatsApp does.
   */
  onPairDeviceSign(conn: ClientConnection, iq: BinaryNode, accountKey: Buffer): boolean {
    const device = this.#awaitingSign.get(conn);
    const signedBytes = bytesOf(child(child(iq, 'pair-device-sign'), 'device-identity'));
    if (!device || !signedBytes) return false;
    this.#awaitingSign.delete(conn);
    const signed = proto.ADVSignedDeviceIdentity.decode(signedBytes);
    const identity = device.keys!.identity;
    const message = Buffer.concat([WA_ADV_DEVICE_SIG_PREFIX, signed.details ?? Buffer.alloc(0), identity, accountKey]);
    if (!signed.deviceSignature || !Curve.verify(identity, message, Buffer.from(signed.deviceSignature))) {
      device.account.devices.delete(device.id);
      conn.failure(401);
      return false;
    }
    device.linked = true;
    device.linkedAt = Date.now();
    this.#registrations.delete(conn);
    for (const [ref, c] of this.#refs) if (c === conn) this.#refs.delete(ref);
    for (const [number, r] of this.#codes) if (r.conn === conn) this.#codes.delete(number);
    this.core.log.add({
      kind: 'registered',
      device: device.pnJid,
      connection: conn.id,
      ...(conn.node ? { node: conn.node } : {}),
    });
    conn.streamError(515);
    return true;
  }

  forget(conn: ClientConnection): void {
    this.#registrations.delete(conn);
    this.#awaitingSign.delete(conn);
    for (const [ref, c] of this.#refs) if (c === conn) this.#refs.delete(ref);
  }
}
