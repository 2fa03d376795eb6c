import {
  Curve,
  NOISE_MODE,
  NOISE_WA_HEADER,
  aesDecryptGCM,
  aesEncryptGCM,
  hkdf,
  proto,
  sha256,
} from '@whiskeysockets/baileys';
import type { KeyPair } from '@whiskeysockets/baileys';

/** The 3-byte big-endian length prefix of every frame. */
const LENGTH_BYTES = 3;
const IV_LENGTH = 12;
const EMPTY = Buffer.alloc(0);

function ivFor(counter: number): Buffer {
  const iv = Buffer.alloc(IV_LENGTH);
  iv.writeUInt32BE(counter, 8);
  return iv;
}

/**
 * The responder's half of WhatsApp's Noise_XX_25519_AESGCM_SHA256 handshake, mirroring Baileys'
 * initiator (`Utils/noise-handler.js`): one chaining hash and one shared counter while handshaking,
 * then a pair of transport keys, each with its own counter.
 */
export class NoiseResponder {
  #hash: Buffer;
  #salt: Buffer;
  #key: Buffer;
  #counter = 0;
  #transport: { enc: Buffer; dec: Buffer; encCounter: number; decCounter: number } | undefined;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.#hash = mode.length === 32 ? mode : sha256(mode);
    this.#salt = this.#hash;
    this.#key = this.#hash;
    this.#authenticate(NOISE_WA_HEADER);
  }

  get ready(): boolean {
    return this.#transport !== undefined;
  }

  #authenticate(data: Uint8Array): void {
    if (!this.#transport) this.#hash = sha256(Buffer.concat([this.#hash, data]));
  }

  #mixIntoKey(data: Uint8Array): void {
    const out = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.#salt, info: '' }));
    this.#salt = out.subarray(0, 32);
    this.#key = out.subarray(32);
    this.#counter = 0;
  }

  #encrypt(plain: Uint8Array): Buffer {
    const out = aesEncryptGCM(plain, this.#key, ivFor(this.#counter++), this.#hash);
    this.#authenticate(out);
    return out;
  }

  #decrypt(cipher: Uint8Array): Buffer {
    const out = aesDecryptGCM(cipher, this.#key, ivFor(this.#counter++), this.#hash);
    this.#authenticate(cipher);
    return out;
  }

  /**
   * Answers the client's hello: our ephemeral key, our static key and the certificate chain, each
   * bound to the transcript as the initiator expects them.
   */
  serverHello(clientHello: Uint8Array, staticKey: KeyPair, certChain: Uint8Array): Buffer {
    const hello = proto.HandshakeMessage.decode(clientHello);
    const clientEphemeral = hello.clientHello?.ephemeral;
    if (!clientEphemeral || clientEphemeral.length !== 32) throw new Error('client hello without an ephemeral key');
    this.#clientEphemeral = Buffer.from(clientEphemeral);
    this.#authenticate(clientEphemeral);
    const ephemeral = Curve.generateKeyPair();
    this.#ephemeral = ephemeral;
    this.#authenticate(ephemeral.public);
    this.#mixIntoKey(Curve.sharedKey(ephemeral.private, clientEphemeral));
    const encStatic = this.#encrypt(staticKey.public);
    this.#mixIntoKey(Curve.sharedKey(staticKey.private, clientEphemeral));
    const payload = this.#encrypt(certChain);
    return Buffer.from(
      proto.HandshakeMessage.encode({
        serverHello: { ephemeral: ephemeral.public, static: encStatic, payload },
      }).finish(),
    );
  }

  #clientEphemeral: Buffer | undefined;
  #ephemeral: KeyPair | undefined;

  /** Reads the client's finish: its static (noise) key and its ClientPayload; switches to transport keys. */
  clientFinish(message: Uint8Array): { clientStatic: Buffer; payload: proto.ClientPayload } {
    const ephemeral = this.#ephemeral;
    if (!ephemeral) throw new Error('client finish before the server hello');
    const finish = proto.HandshakeMessage.decode(message).clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without its static key or payload');
    const clientStatic = this.#decrypt(finish.static);
    this.#mixIntoKey(Curve.sharedKey(ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.#decrypt(finish.payload));
    const keys = Buffer.from(hkdf(EMPTY, 64, { salt: this.#salt, info: '' }));
    // The initiator writes with the first half and reads with the second.
    this.#transport = { dec: keys.subarray(0, 32), enc: keys.subarray(32), encCounter: 0, decCounter: 0 };
    return { clientStatic, payload };
  }

  encryptFrame(plain: Uint8Array): Buffer {
    const t = this.#transport;
    if (!t) throw new Error('transport keys are not ready');
    return aesEncryptGCM(plain, t.enc, ivFor(t.encCounter++), EMPTY);
  }

  decryptFrame(cipher: Uint8Array): Buffer {
    const t = this.#transport;
    if (!t) throw new Error('transport keys are not ready');
    return aesDecryptGCM(cipher, t.dec, ivFor(t.decCounter++), EMPTY);
  }
}

/** Prefixes a frame with its length. */
export function encodeFrame(data: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(LENGTH_BYTES + data.length);
  frame.writeUIntBE(data.length, 0, LENGTH_BYTES);
  frame.set(data, LENGTH_BYTES);
  return frame;
}

/**
 * Splits a client's byte stream into frames. The first bytes of a connection carry WhatsApp's
 * intro header ("WA", then the protocol and dictionary versions; with routing info, an "ED" header
 * before it), which is read once and checked.
 */
export class FrameReader {
  #buffer: Buffer = EMPTY;
  #introRead = false;

  push(data: Buffer): Buffer[] {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, data]) : data;
    if (!this.#introRead && !this.#readIntro()) return [];
    const frames: Buffer[] = [];
    while (this.#buffer.length >= LENGTH_BYTES) {
      const size = this.#buffer.readUIntBE(0, LENGTH_BYTES);
      if (this.#buffer.length < LENGTH_BYTES + size) break;
      frames.push(this.#buffer.subarray(LENGTH_BYTES, LENGTH_BYTES + size));
      this.#buffer = this.#buffer.subarray(LENGTH_BYTES + size);
    }
    return frames;
  }

  #readIntro(): boolean {
    let offset = 0;
    if (this.#buffer.length >= 2 && this.#buffer.toString('latin1', 0, 2) === 'ED') {
      if (this.#buffer.length < 7) return false;
      const routingLength = (this.#buffer[4]! << 16) | this.#buffer.readUInt16BE(5);
      offset = 7 + routingLength;
    }
    if (this.#buffer.length < offset + NOISE_WA_HEADER.length) return false;
    const header = this.#buffer.subarray(offset, offset + NOISE_WA_HEADER.length);
    if (!header.equals(NOISE_WA_HEADER)) throw new Error(`unexpected intro header ${header.toString('hex')}`);
    this.#buffer = this.#buffer.subarray(offset + NOISE_WA_HEADER.length);
    this.#introRead = true;
    return true;
  }
}
