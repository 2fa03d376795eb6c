import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  KEY_BUNDLE_TYPE,
  decryptMessageNode,
  decryptPollVote,
  encodeBigEndian,
  encodeWAMessage,
  generateMessageIDV2,
  generateSignalPubKey,
  generateWAMessageContent,
  initAuthCreds,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
} from '@whiskeysockets/baileys';
import type {
  AnyMessageContent,
  AuthenticationCreds,
  BinaryNode,
  KeyPair,
  MediaType,
  SignalKeyStoreWithTransaction,
  SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import type { MediaStore } from '../media/media-server.js';
import type { Account, Device, Endpoint } from '../server/directory.js';
import type { PhoneHooks, SimCore } from '../server/sim-core.js';
import { bigEndian, child, children, unixNow } from '../server/stanzas.js';
import { decryptMedia, sha256Hex } from './media-crypto.js';
import { memoryKeyStore } from './memory-keys.js';
import { AddressBook } from './address-book.js';
import type { AddressBookSize } from './address-book.js';
import { historySyncMessages } from './history-sync.js';
import { describeMessage } from './phone-records.js';
import type { DecryptFailure, ReceivedRecord } from './phone-records.js';
import { encryptPollVote } from './poll-vote.js';

/** How many one-time pre-keys a phone keeps on the server. */
const PRE_KEYS = 50;
/** Sent messages kept for answering retry receipts and for history sync. */
const KEEP_SENT = 2_000;

/** The router a phone sends through: the same one sockets use. */
export interface StanzaSink {
  dispatch(device: Device, endpoint: Endpoint, node: BinaryNode): void;
}

/** What the phone saw come back for one of its own messages. */
export interface ReceiptRecord {
  id: string;
  from: string;
  type: string;
  connection?: string;
  t: number;
}

export interface CallRecord {
  from: string;
  action: string;
  callId?: string;
  connection?: string;
  t: number;
}

/**
 * A simulated phone: the primary device (device 0) of one account, a real Signal client built from
 * Baileys' own Signal repository. It decrypts what reaches it and records it, with the connection it
 * came from; it sends every kind of message, encrypted for each device of the recipient (and a copy
 * for its own linked devices); it links companions by QR or code and gives them keys and history.
 */
export class Phone implements Endpoint, PhoneHooks {
  readonly id: string;
  readonly node = undefined;
  readonly creds: AuthenticationCreds = initAuthCreds();
  readonly keys: SignalKeyStoreWithTransaction;
  readonly repo: SignalRepositoryWithLIDStore;
  readonly received: ReceivedRecord[] = [];
  readonly failures: DecryptFailure[] = [];
  readonly receipts: ReceiptRecord[] = [];
  readonly calls: CallRecord[] = [];
  readonly chatstates: { from: string; state: string; t: number }[] = [];
  readonly #sent = new Map<string, { to: string; message: proto.IMessage; t: number }>();
  readonly #polls = new Map<string, { secret: Buffer; creator: string; options: string[] }>();
  readonly #senderKeyMemory = new Map<string, Set<string>>();
  readonly #seen = new Set<string>();
  readonly #retries = new Map<string, number>();
  /** The app-state key this account's devices share (given to each companion at its first login). */
  readonly appStateKey = { keyId: randomBytes(6), keyData: randomBytes(32) };
  #nextPreKey = 1;
  #seq = 0;
  #inbox: Promise<void> = Promise.resolve();
  /** Every read receipt the phone sends is automatic when true (a phone with the chat open). */
  autoRead = false;
  /** Contacts, groups and history that only this phone knows, for a realistic first sync. */
  book: AddressBook;

  constructor(
    readonly account: Account,
    private readonly core: SimCore,
    private readonly sink: StanzaSink,
    private readonly media: MediaStore,
    private readonly logger: ILogger,
    bookSize: AddressBookSize = {},
  ) {
    this.id = `phone:${account.number}`;
    this.book = new AddressBook(account.number, bookSize);
    this.keys = memoryKeyStore(logger);
    this.repo = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(
      { creds: this.creds, keys: this.keys },
      logger,
      async (jids: string[]) =>
        jids
          .map((pn) => ({ pn, account: core.directory.account(pn) }))
          .filter((e) => e.account)
          .map((e) => ({ pn: e.pn, lid: e.account!.lidJid })),
    );
    const device = account.phone;
    device.keys = {
      registrationId: this.creds.registrationId,
      identity: Buffer.from(this.creds.signedIdentityKey.public),
      signedPreKey: {
        id: this.creds.signedPreKey.keyId,
        publicKey: Buffer.from(this.creds.signedPreKey.keyPair.public),
        signature: Buffer.from(this.creds.signedPreKey.signature),
      },
      preKeys: new Map(),
    };
    this.#topUpPreKeys();
    device.endpoint = this;
    core.phones.set(account.number, this);
  }

  get device(): Device {
    return this.account.phone;
  }

  get meId(): string {
    return this.account.pnJid;
  }

  /** The account's signature key: the phone's identity key. */
  get accountKey(): Buffer {
    return Buffer.from(this.creds.signedIdentityKey.public);
  }

  /** Signs with the account key (a companion's device identity, when linking). */
  sign(message: Buffer): { key: Buffer; signature: Buffer } {
    return { key: this.accountKey, signature: Buffer.from(Curve.sign(this.creds.signedIdentityKey.private, message)) };
  }

  #topUpPreKeys(): void {
    const onServer = this.device.keys!.preKeys;
    const fresh: Record<string, KeyPair> = {};
    while (onServer.size < PRE_KEYS) {
      const id = this.#nextPreKey++;
      const pair = Curve.generateKeyPair();
      fresh[id] = pair;
      onServer.set(id, Buffer.from(pair.public));
    }
    void this.keys.set({ 'pre-key': fresh });
  }

  // ---- the endpoint: what the server delivers ----

  send(node: BinaryNode): void {
    this.#inbox = this.#inbox
      .then(() => this.#receive(node))
      .catch((err: unknown) => this.logger.error({ err, tag: node.tag }, 'phone failed to handle a stanza'));
  }

  /** Resolves once everything delivered so far has been handled. */
  settled(): Promise<void> {
    return this.#inbox;
  }

  async #receive(node: BinaryNode): Promise<void> {
    switch (node.tag) {
      case 'message':
        await this.#onMessage(node);
        return;
      case 'receipt':
        this.#onReceipt(node);
        return;
      case 'call': {
        const [info] = children(node);
        this.calls.push({
          from: jidNormalizedUser(node.attrs.from),
          action: info?.tag ?? '?',
          ...(info?.attrs['call-id'] ? { callId: info.attrs['call-id'] } : {}),
          ...(node.attrs['x-sim-connection'] ? { connection: node.attrs['x-sim-connection'] } : {}),
          t: Date.now(),
        });
        this.#ack(node);
        return;
      }
      case 'notification':
        if (node.attrs.type === 'encrypt' && node.attrs.from === 's.whatsapp.net') this.#topUpPreKeys();
        this.#ack(node);
        return;
      case 'chatstate': {
        const [state] = children(node);
        this.chatstates.push({ from: jidNormalizedUser(node.attrs.from), state: state?.tag ?? '?', t: Date.now() });
        return;
      }
      default:
        return;
    }
  }

  #ack(node: BinaryNode): void {
    this.sink.dispatch(this.device, this, {
      tag: 'ack',
      attrs: {
        id: node.attrs.id ?? '',
        class: node.tag,
        to: node.attrs.from ?? '',
        ...(node.attrs.type ? { type: node.attrs.type } : {}),
        ...(node.attrs.participant ? { participant: node.attrs.participant } : {}),
      },
    });
  }

  #onReceipt(node: BinaryNode): void {
    const ids = [node.attrs.id ?? '', ...children(child(node, 'list')).map((i) => i.attrs.id ?? '')].filter(Boolean);
    const from = jidNormalizedUser(node.attrs.participant ?? node.attrs.from);
    const type = node.attrs.type ?? 'delivery';
    for (const id of ids) {
      this.receipts.push({
        id,
        from,
        type,
        ...(node.attrs['x-sim-connection'] ? { connection: node.attrs['x-sim-connection'] } : {}),
        t: Date.now(),
      });
    }
    this.#ack(node);
    if (type === 'retry') void this.#answerRetry(node, ids);
  }

  async #onMessage(node: BinaryNode): Promise<void> {
    const decoded = decryptMessageNode(node, this.meId, this.account.lidJid, this.repo, this.logger);
    const { fullMessage, author } = decoded;
    await decoded.decrypt();
    const key = fullMessage.key;
    const id = key.id ?? '';
    const chat = jidNormalizedUser(key.remoteJid ?? '');
    const from = jidNormalizedUser(author);
    const connection = node.attrs['x-sim-connection'];
    const nodeLabel = node.attrs['x-sim-node'];
    if (fullMessage.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT) {
      const params = fullMessage.messageStubParameters as string[] | null | undefined;
      const error = params?.[0] ?? 'undecryptable';
      this.failures.push({
        id,
        from,
        chat,
        error,
        ...(connection ? { connection } : {}),
        ...(nodeLabel ? { node: nodeLabel } : {}),
        t: Date.now(),
      });
      this.core.log.add({
        kind: 'decrypt-failure',
        device: this.device.pnJid,
        id,
        from,
        error,
        ...(connection ? { connection } : {}),
      });
      await this.#sendRetry(node);
      return;
    }
    const message = fullMessage.message;
    this.#learn(id, from, message);
    const duplicate = this.#seen.has(`${from}/${id}`);
    this.#seen.add(`${from}/${id}`);
    const fields = describeMessage(message);
    const record: ReceivedRecord = {
      seq: ++this.#seq,
      id,
      from,
      chat,
      fromMe: !!key.fromMe,
      ...fields,
      ...(connection ? { connection } : {}),
      ...(nodeLabel ? { node: nodeLabel } : {}),
      offline: !!node.attrs.offline,
      duplicate,
      t: Date.now(),
    };
    if (record.media && message) await this.#download(record, message);
    if (fields.type === 'pollVote' && message?.pollUpdateMessage) {
      record.pollVote = this.#readVote(message.pollUpdateMessage, from);
    }
    this.received.push(record);
    this.core.log.add({
      kind: 'phone-received',
      device: this.device.pnJid,
      id,
      from,
      chat,
      type: record.type,
      ...(connection ? { connection } : {}),
      duplicate,
    });
    // The delivery receipt, as a client sends it once the message is decrypted.
    const category = node.attrs.category;
    const receipt: BinaryNode = { tag: 'receipt', attrs: { id, to: node.attrs.from ?? '' } };
    if (node.attrs.participant) receipt.attrs.participant = node.attrs.participant;
    if (category === 'peer') receipt.attrs.type = 'peer_msg';
    else if (key.fromMe && node.attrs.recipient) {
      receipt.attrs = { id, type: 'sender', recipient: node.attrs.recipient, to: node.attrs.from ?? '' };
    }
    this.sink.dispatch(this.device, this, receipt);
    if (this.autoRead && !key.fromMe && category !== 'peer') this.read(id);
  }

  /** Remembers a poll's secret (to vote on it later) and whatever else later messages refer to. */
  #learn(id: string, from: string, message: proto.IMessage | null | undefined): void {
    const m = normalizeMessageContent(message ?? undefined);
    const poll = m?.pollCreationMessage ?? m?.pollCreationMessageV2 ?? m?.pollCreationMessageV3;
    const secret = message?.messageContextInfo?.messageSecret;
    if (poll && secret) {
      this.#polls.set(id, {
        secret: Buffer.from(secret),
        creator: from,
        options: (poll.options ?? []).map((o) => o.optionName ?? ''),
      });
    }
  }

  /** Reads a vote on one of our polls: the voter encrypted it for (poll id, creator, voter), PN or LID. */
  #readVote(update: proto.Message.IPollUpdateMessage, voter: string): { pollId: string; options: string[] } {
    const pollId = update.pollCreationMessageKey?.id ?? '';
    const poll = this.#polls.get(pollId);
    const vote = update.vote;
    if (!poll || !vote?.encPayload || !vote.encIv) return { pollId, options: [] };
    const voterAccount = this.core.directory.account(voter);
    const creators = [poll.creator, this.account.lidJid];
    const voters = [voter, ...(voterAccount ? [voterAccount.lidJid] : [])];
    for (const pollCreatorJid of creators) {
      for (const voterJid of voters) {
        try {
          const { selectedOptions } = decryptPollVote(vote, {
            pollCreatorJid,
            pollMsgId: pollId,
            pollEncKey: poll.secret,
            voterJid,
          });
          const byHash = new Map(poll.options.map((o) => [sha256Hex(Buffer.from(o)), o]));
          return {
            pollId,
            options: (selectedOptions ?? []).map((h) => byHash.get(Buffer.from(h).toString('hex')) ?? '?'),
          };
        } catch {
          // Another pair of addresses may be the one the vote was sealed for.
        }
      }
    }
    return { pollId, options: [] };
  }

  async #download(record: ReceivedRecord, message: proto.IMessage): Promise<void> {
    const m = normalizeMessageContent(message);
    const content =
      m?.imageMessage ?? m?.videoMessage ?? m?.ptvMessage ?? m?.audioMessage ?? m?.documentMessage ?? m?.stickerMessage;
    if (!content?.directPath || !content.mediaKey || !record.media) return;
    const type = (record.type === 'sticker' ? 'sticker' : record.type) as MediaType;
    try {
      const blob = this.media.get(content.directPath);
      if (!blob) throw new Error('media not found on the server');
      const bytes = await decryptMedia(blob, content.mediaKey, type);
      record.media.sha256 = sha256Hex(bytes);
      record.media.size = bytes.length;
      if (content.fileSha256 && sha256Hex(bytes) !== Buffer.from(content.fileSha256).toString('hex')) {
        record.media.error = 'fileSha256 does not match';
      }
    } catch (err) {
      record.media.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** A retry receipt, as Baileys' clients send one: registration id, and from the second time a key bundle. */
  async #sendRetry(node: BinaryNode): Promise<void> {
    const id = node.attrs.id ?? '';
    const count = (this.#retries.get(id) ?? 0) + 1;
    this.#retries.set(id, count);
    if (count > 5) return;
    const content: BinaryNode[] = [
      { tag: 'retry', attrs: { count: String(count), id, t: node.attrs.t ?? unixNow(), v: '1', error: '0' } },
      { tag: 'registration', attrs: {}, content: encodeBigEndian(this.creds.registrationId) },
    ];
    if (count > 1) {
      const pair = Curve.generateKeyPair();
      const keyId = this.#nextPreKey++;
      await this.keys.set({ 'pre-key': { [keyId]: pair } });
      content.push({
        tag: 'keys',
        attrs: {},
        content: [
          { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
          { tag: 'identity', attrs: {}, content: this.creds.signedIdentityKey.public },
          {
            tag: 'key',
            attrs: {},
            content: [
              { tag: 'id', attrs: {}, content: bigEndian(keyId, 3) },
              { tag: 'value', attrs: {}, content: pair.public },
            ],
          },
          {
            tag: 'skey',
            attrs: {},
            content: [
              { tag: 'id', attrs: {}, content: bigEndian(this.creds.signedPreKey.keyId, 3) },
              { tag: 'value', attrs: {}, content: this.creds.signedPreKey.keyPair.public },
              { tag: 'signature', attrs: {}, content: this.creds.signedPreKey.signature },
            ],
          },
        ],
      });
    }
    const attrs: Record<string, string> = { id, type: 'retry', to: node.attrs.from ?? '' };
    if (node.attrs.participant) attrs.participant = node.attrs.participant;
    if (node.attrs.recipient) attrs.recipient = node.attrs.recipient;
    this.sink.dispatch(this.device, this, { tag: 'receipt', attrs, content });
  }

  /** Someone could not decrypt our message: send it again to that device, on a fresh session. */
  async #answerRetry(node: BinaryNode, ids: string[]): Promise<void> {
    const deviceJid = node.attrs.participant ?? node.attrs.from;
    if (!deviceJid) return;
    for (const id of ids) {
      const sent = this.#sent.get(id);
      if (!sent) continue;
      // A fresh session over the old one, which is archived as a Signal client does (never deleted): the
      // other side's messages still in flight on the old session must decrypt.
      await this.#ensureSessions([deviceJid], true);
      const bytes = encodeWAMessage(sent.message);
      const { type, ciphertext } = await this.repo.encryptMessage({ jid: deviceJid, data: bytes });
      const group = sent.to.endsWith('@g.us');
      this.sink.dispatch(this.device, this, {
        tag: 'message',
        attrs: { id, to: group ? sent.to : deviceJid, type: 'text', ...(group ? { participant: deviceJid } : {}) },
        content: [{ tag: 'enc', attrs: { v: '2', type, count: '1' }, content: ciphertext }],
      });
    }
  }

  // ---- sending ----

  /** Sends a message built by Baileys' own content builder (text, media, location, contact, reaction...). */
  async sendContent(to: string, content: AnyMessageContent, quoted?: { id: string; from: string }): Promise<string> {
    const message = await generateWAMessageContent(content, {
      upload: async (filePath: string, { mediaType }: { mediaType: string }) => {
        const bytes = await readFile(filePath);
        const directPath = this.media.put(bytes, mediaType);
        return { mediaUrl: `https://${this.core.mediaHost}${directPath}`, directPath };
      },
      logger: this.logger,
      userJid: this.meId,
    } as never);
    if (quoted) {
      const target = normalizeMessageContent(message);
      const inner =
        target &&
        (Object.values(target).find((v) => v && typeof v === 'object' && 'contextInfo' in (v as object)) as
          { contextInfo?: proto.IContextInfo } | undefined);
      const contextInfo = { stanzaId: quoted.id, participant: quoted.from, quotedMessage: { conversation: '' } };
      if (inner) inner.contextInfo = { ...(inner.contextInfo ?? {}), ...contextInfo };
      else if (message.conversation !== undefined && message.conversation !== null) {
        const text = message.conversation;
        delete message.conversation;
        message.extendedTextMessage = { text, contextInfo };
      } else if (message.extendedTextMessage) message.extendedTextMessage.contextInfo = contextInfo;
    }
    return this.relay(to, message);
  }

  /** Votes on a poll this phone received (options by name). */
  async vote(to: string, pollId: string, options: string[]): Promise<string> {
    const poll = this.#polls.get(pollId);
    if (!poll) throw new Error(`this phone has not seen poll ${pollId}`);
    const vote = encryptPollVote({
      pollId,
      pollCreatorJid: poll.creator,
      voterJid: this.meId,
      secret: poll.secret,
      options,
    });
    return this.relay(to, {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: to, id: pollId, fromMe: false, participant: poll.creator },
        vote,
        senderTimestampMs: Date.now(),
      },
    });
  }

  /**
   * Encrypts `message` for every device of the chat (members' devices for a group) and a copy for the
   * account's own linked devices, then hands the stanza to the router.
   */
  async relay(to: string, message: proto.IMessage, extra: { id?: string; category?: string } = {}): Promise<string> {
    const id = extra.id ?? generateMessageIDV2(this.meId);
    if (!message.messageContextInfo) message.messageContextInfo = {};
    if (!message.messageContextInfo.messageSecret) message.messageContextInfo.messageSecret = randomBytes(32);
    const isGroup = to.endsWith('@g.us');
    const type = mediaType(message)
      ? 'media'
      : message.reactionMessage
        ? 'reaction'
        : message.pollCreationMessageV3 || message.pollUpdateMessage
          ? 'poll'
          : 'text';
    const content: BinaryNode[] = [];
    const participants: BinaryNode[] = [];
    if (isGroup) {
      const group = this.core.groups.get(to);
      if (!group) throw new Error(`no group ${to}`);
      const targets = [...group.members.keys()].flatMap((a) => a.linkedDevices()).filter((d) => d !== this.device);
      const { ciphertext, senderKeyDistributionMessage } = await this.repo.encryptGroupMessage({
        group: to,
        meId: this.meId,
        data: encodeWAMessage(message),
      });
      let memory = this.#senderKeyMemory.get(to);
      if (!memory) this.#senderKeyMemory.set(to, (memory = new Set()));
      const needKey = targets.map((d) => d.pnJid).filter((jid) => !memory.has(jid));
      if (needKey.length) {
        await this.#ensureSessions(needKey);
        const skdm = encodeWAMessage({
          senderKeyDistributionMessage: {
            groupId: to,
            axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage,
          },
        });
        for (const jid of needKey) {
          const enc = await this.repo.encryptMessage({ jid, data: skdm });
          participants.push({
            tag: 'to',
            attrs: { jid },
            content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }],
          });
          memory.add(jid);
        }
      }
      if (participants.length) content.push({ tag: 'participants', attrs: {}, content: participants });
      content.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext });
    } else {
      const target = this.core.directory.account(to);
      if (!target) throw new Error(`no account ${to}`);
      const theirs = target.linkedDevices().map((d) => d.jidLike(to));
      const mine = this.account
        .linkedDevices()
        .filter((d) => d !== this.device)
        .map((d) => d.pnJid);
      await this.#ensureSessions([...theirs, ...mine]);
      const dsm = encodeWAMessage({
        deviceSentMessage: { destinationJid: to, message },
        messageContextInfo: message.messageContextInfo,
      });
      const plain = encodeWAMessage(message);
      for (const jid of [...theirs, ...mine]) {
        const enc = await this.repo.encryptMessage({ jid, data: mine.includes(jid) ? dsm : plain });
        participants.push({
          tag: 'to',
          attrs: { jid },
          content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }],
        });
      }
      content.push({ tag: 'participants', attrs: {}, content: participants });
    }
    this.#sent.set(id, { to, message, t: Date.now() });
    if (this.#sent.size > KEEP_SENT) this.#sent.delete(this.#sent.keys().next().value!);
    this.#learn(id, this.meId, message);
    this.sink.dispatch(this.device, this, {
      tag: 'message',
      attrs: { id, to, type, ...(extra.category ? { category: extra.category } : {}) },
      content,
    });
    return id;
  }

  /** Sends a protocol message to one companion of this account (key share, history sync). */
  async #peer(companion: Device, message: proto.IMessage): Promise<void> {
    const jid = companion.pnJid;
    await this.#ensureSessions([jid]);
    const enc = await this.repo.encryptMessage({ jid, data: encodeWAMessage(message) });
    this.sink.dispatch(this.device, this, {
      tag: 'message',
      attrs: { id: generateMessageIDV2(this.meId), to: jid, type: 'text', category: 'peer' },
      content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }],
    });
  }

  /** Sessions with every device that has none yet, from key bundles taken off the server. */
  async #ensureSessions(jids: string[], fresh = false): Promise<void> {
    for (const jid of jids) {
      if (!fresh && (await this.repo.validateSession(jid)).exists) continue;
      const device = this.core.directory.device(jid);
      const keys = device?.keys;
      if (!keys) throw new Error(`no keys for ${jid}`);
      const first = keys.preKeys.entries().next();
      let preKey: { keyId: number; publicKey: Buffer } | undefined;
      if (!first.done) {
        keys.preKeys.delete(first.value[0]);
        preKey = { keyId: first.value[0], publicKey: generateSignalPubKey(first.value[1]) as Buffer };
      }
      await this.repo.injectE2ESession({
        jid,
        session: {
          registrationId: keys.registrationId,
          identityKey: generateSignalPubKey(keys.identity),
          signedPreKey: {
            keyId: keys.signedPreKey.id,
            publicKey: generateSignalPubKey(keys.signedPreKey.publicKey),
            signature: keys.signedPreKey.signature,
          },
          ...(preKey ? { preKey } : {}),
        },
      });
    }
  }

  /** A read receipt for messages this phone received (the chat opened on the phone). */
  read(...ids: string[]): number {
    let sent = 0;
    for (const id of ids) {
      const record = [...this.received].reverse().find((r) => r.id === id && !r.fromMe);
      if (!record) continue;
      const group = record.chat.endsWith('@g.us');
      this.sink.dispatch(this.device, this, {
        tag: 'receipt',
        attrs: {
          id,
          type: 'read',
          t: unixNow(),
          to: group ? record.chat : record.from,
          ...(group ? { participant: record.from } : {}),
        },
      });
      sent++;
    }
    return sent;
  }

  /** A chat state (composing, paused) or a presence from this phone. */
  presence(to: string | undefined, state: 'available' | 'unavailable' | 'composing' | 'paused' | 'recording'): void {
    if (state === 'available' || state === 'unavailable') {
      this.sink.dispatch(this.device, this, { tag: 'presence', attrs: { type: state, name: this.account.pushName } });
      return;
    }
    if (!to) return;
    this.sink.dispatch(this.device, this, {
      tag: 'chatstate',
      attrs: { to },
      content: [
        { tag: state === 'recording' ? 'composing' : state, attrs: state === 'recording' ? { media: 'audio' } : {} },
      ],
    });
  }

  /** Rings `to` with a voice call offer (what `autoRejectCalls` answers). */
  call(to: string, video = false): string {
    const callId = randomBytes(16).toString('hex').toUpperCase();
    this.sink.dispatch(this.device, this, {
      tag: 'call',
      attrs: { id: generateMessageIDV2(this.meId), to },
      content: [
        {
          tag: 'offer',
          attrs: { 'call-id': callId, 'call-creator': this.meId },
          content: [
            { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
            ...(video ? [{ tag: 'video', attrs: { enc: 'vp8' } }] : []),
            { tag: 'net', attrs: { medium: '3' } },
          ],
        },
      ],
    });
    return callId;
  }

  // ---- linking ----

  /** The first login of a new companion: share the app-state key, then the first history sync. */
  onCompanionFirstLogin(companion: Device): void {
    void (async () => {
      await this.#peer(companion, {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
          appStateSyncKeyShare: {
            keys: [
              {
                keyId: { keyId: this.appStateKey.keyId },
                keyData: {
                  keyData: this.appStateKey.keyData,
                  fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0, companion.keyIndex] },
                  timestamp: Date.now(),
                },
              },
            ],
          },
        },
      });
      const history = historySyncMessages(
        this.account,
        this.core,
        this.book,
        [...this.#sent.values()],
        companion.requireFullSync,
      );
      for (const message of history) await this.#peer(companion, message);
    })().catch((err: unknown) => this.logger.error({ err }, 'could not sync a new companion'));
  }
}

function mediaType(message: proto.IMessage): string | undefined {
  const m = normalizeMessageContent(message);
  if (m?.imageMessage) return 'image';
  if (m?.videoMessage || m?.ptvMessage) return 'video';
  if (m?.audioMessage) return 'audio';
  if (m?.documentMessage) return 'document';
  if (m?.stickerMessage) return 'sticker';
  return undefined;
}
