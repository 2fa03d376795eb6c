import { createHash, randomBytes } from 'node:crypto';
import { KEY_BUNDLE_TYPE, jidDecode } from '@whiskeysockets/baileys';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { AppStateStore } from './app-state-store.js';
import type { Account, Device, DeviceKeys, Endpoint, PrivacyName } from './directory.js';
import type { SimCore } from './sim-core.js';
import {
  SERVER_JID,
  bigEndian,
  bytesOf,
  child,
  children,
  childrenOf,
  iqError,
  iqResult,
  readBigEndian,
  textOf,
  unixNow,
} from './stanzas.js';

/** Below this many one-time pre-keys the server asks the device for more, as WhatsApp does. */
export const PRE_KEY_LOW_WATER = 5;

export interface IqContext {
  core: SimCore;
  device: Device;
  endpoint: Endpoint;
}

/** Answers `encrypt`: pre-key uploads and counts, key bundles, signed pre-key rotation, digests. */
export function encryptIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const { device } = ctx;
  if (iq.attrs.type === 'set') {
    const rotate = child(iq, 'rotate');
    if (rotate) {
      const skey = readSignedPreKey(child(rotate, 'skey'));
      if (!skey || !device.keys) return iqError(iq, 400, 'bad-request');
      device.keys.signedPreKey = skey;
      return iqResult(iq);
    }
    const keys = readKeyUpload(iq);
    if (!keys) return iqError(iq, 400, 'bad-request');
    if (device.keys && !device.keys.identity.equals(keys.identity)) return iqError(iq, 409, 'conflict');
    const merged = device.keys ? new Map([...device.keys.preKeys, ...keys.preKeys]) : keys.preKeys;
    device.keys = { ...keys, preKeys: merged };
    return iqResult(iq);
  }
  if (child(iq, 'count')) {
    return iqResult(iq, [{ tag: 'count', attrs: { value: String(device.keys?.preKeys.size ?? 0) } }]);
  }
  if (child(iq, 'digest')) {
    if (!device.keys) return iqError(iq, 404, 'item-not-found');
    const ids = [...device.keys.preKeys.keys()];
    const hash = createHash('sha1').update(device.keys.identity).update(device.keys.signedPreKey.publicKey).digest();
    return iqResult(iq, [
      {
        tag: 'digest',
        attrs: {},
        content: [
          { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
          { tag: 'identity', attrs: {}, content: device.keys.identity },
          skeyNode(device.keys),
          { tag: 'list', attrs: {}, content: ids.map((id) => ({ tag: 'id', attrs: {}, content: bigEndian(id, 3) })) },
          { tag: 'hash', attrs: {}, content: hash },
        ],
      },
    ]);
  }
  const key = child(iq, 'key');
  if (key) {
    const users: BinaryNode[] = [];
    for (const user of childrenOf(key, 'user')) {
      const jid = user.attrs.jid;
      const target = ctx.core.directory.device(jid);
      if (!jid || !target?.keys) continue;
      users.push(bundleNode(jid, target, ctx));
    }
    return iqResult(iq, [{ tag: 'list', attrs: {}, content: users }]);
  }
  return iqError(iq, 501, 'feature-not-implemented');
}

/** One device's key bundle, handing out (and forgetting) one of its one-time pre-keys. */
function bundleNode(jid: string, target: Device, ctx: IqContext): BinaryNode {
  const keys = target.keys!;
  const first = keys.preKeys.entries().next();
  const content: BinaryNode[] = [
    { tag: 'registration', attrs: {}, content: bigEndian(keys.registrationId, 4) },
    { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
    { tag: 'identity', attrs: {}, content: keys.identity },
    skeyNode(keys),
  ];
  if (!first.done) {
    const [id, pub] = first.value;
    keys.preKeys.delete(id);
    content.push({
      tag: 'key',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: bigEndian(id, 3) },
        { tag: 'value', attrs: {}, content: pub },
      ],
    });
    if (keys.preKeys.size < PRE_KEY_LOW_WATER) notifyPreKeysLow(ctx.core, target);
  }
  return { tag: 'user', attrs: { jid }, content };
}

function notifyPreKeysLow(core: SimCore, device: Device): void {
  core.queues.deliver(device, {
    tag: 'notification',
    attrs: { id: randomBytes(8).toString('hex').toUpperCase(), type: 'encrypt', from: SERVER_JID, t: unixNow() },
    content: [{ tag: 'count', attrs: { value: String(device.keys?.preKeys.size ?? 0) } }],
  });
}

function skeyNode(keys: DeviceKeys): BinaryNode {
  return {
    tag: 'skey',
    attrs: {},
    content: [
      { tag: 'id', attrs: {}, content: bigEndian(keys.signedPreKey.id, 3) },
      { tag: 'value', attrs: {}, content: keys.signedPreKey.publicKey },
      { tag: 'signature', attrs: {}, content: keys.signedPreKey.signature },
    ],
  };
}

function readSignedPreKey(node: BinaryNode | undefined): DeviceKeys['signedPreKey'] | undefined {
  const id = readBigEndian(bytesOf(child(node, 'id')));
  const publicKey = bytesOf(child(node, 'value'));
  const signature = bytesOf(child(node, 'signature'));
  if (id === undefined || !publicKey || !signature) return undefined;
  return { id, publicKey, signature };
}

function readKeyUpload(iq: BinaryNode): DeviceKeys | undefined {
  const registrationId = readBigEndian(bytesOf(child(iq, 'registration')));
  const identity = bytesOf(child(iq, 'identity'));
  const signedPreKey = readSignedPreKey(child(iq, 'skey'));
  if (registrationId === undefined || !identity || identity.length !== 32 || !signedPreKey) return undefined;
  const preKeys = new Map<number, Buffer>();
  for (const key of childrenOf(child(iq, 'list'), 'key')) {
    const id = readBigEndian(bytesOf(child(key, 'id')));
    const value = bytesOf(child(key, 'value'));
    if (id !== undefined && value) preKeys.set(id, value);
  }
  return { registrationId, identity, signedPreKey, preKeys };
}

/** Answers `usync`: devices, LIDs, contact (is this number on WhatsApp), status text. */
export function usyncIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const usync = child(iq, 'usync');
  const protocols = children(child(usync, 'query')).map((p) => p.tag);
  const users: BinaryNode[] = [];
  for (const user of childrenOf(child(usync, 'list'), 'user')) {
    const phone = textOf(child(user, 'contact'));
    const asked = user.attrs.jid ?? (phone ? `${phone.replace(/\D/g, '')}@s.whatsapp.net` : undefined);
    if (!asked) continue;
    const account = ctx.core.directory.account(asked);
    const jid = asked.includes(':') ? `${jidDecode(asked)!.user}@${jidDecode(asked)!.server}` : asked;
    const content: BinaryNode[] = [];
    for (const protocol of protocols) {
      const part = usyncPart(protocol, account, jid);
      if (part) content.push(part);
    }
    users.push({ tag: 'user', attrs: { jid }, content });
  }
  return iqResult(iq, [
    {
      tag: 'usync',
      attrs: { sid: usync?.attrs.sid ?? '', index: '0', last: 'true', mode: usync?.attrs.mode ?? 'query' },
      content: [
        { tag: 'result', attrs: {}, content: protocols.map((p) => ({ tag: p, attrs: {} })) },
        { tag: 'list', attrs: {}, content: users },
      ],
    },
  ]);
}

function usyncPart(protocol: string, account: Account | undefined, jid: string): BinaryNode | undefined {
  switch (protocol) {
    case 'devices':
      return {
        tag: 'devices',
        attrs: {},
        content: [
          {
            tag: 'device-list',
            attrs: {},
            content: (account?.linkedDevices() ?? []).map((d): BinaryNode => ({
              tag: 'device',
              attrs: d.id === 0 ? { id: '0' } : { id: String(d.id), 'key-index': String(d.keyIndex) },
            })),
          },
          ...(account ? [{ tag: 'key-index-list', attrs: { ts: unixNow() } }] : []),
        ],
      };
    case 'lid':
      return account && !jid.endsWith('@lid') ? { tag: 'lid', attrs: { val: account.lidJid } } : undefined;
    case 'contact':
      return { tag: 'contact', attrs: { type: account ? 'in' : 'out' } };
    case 'status':
      return account
        ? { tag: 'status', attrs: { t: unixNow() }, content: Buffer.from(account.about, 'utf8') }
        : { tag: 'status', attrs: { code: '404' } };
    case 'disappearing_mode':
      return { tag: 'disappearing_mode', attrs: { duration: '0', t: '0' } };
    default:
      return undefined;
  }
}

const PRIVACY_NAMES: readonly PrivacyName[] = [
  'last',
  'online',
  'profile',
  'status',
  'readreceipts',
  'groupadd',
  'calladd',
  'messages',
];

export function privacyIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const account = ctx.device.account;
  if (iq.attrs.type === 'get') {
    return iqResult(iq, [
      {
        tag: 'privacy',
        attrs: {},
        content: PRIVACY_NAMES.map((name) => ({ tag: 'category', attrs: { name, value: account.privacy[name] } })),
      },
    ]);
  }
  for (const category of childrenOf(child(iq, 'privacy'), 'category')) {
    const name = category.attrs.name as PrivacyName;
    if (PRIVACY_NAMES.includes(name) && category.attrs.value) account.privacy[name] = category.attrs.value;
  }
  return iqResult(iq);
}

export function blocklistIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const account = ctx.device.account;
  if (iq.attrs.type === 'get') {
    return iqResult(iq, [
      { tag: 'list', attrs: {}, content: [...account.blocklist].map((jid) => ({ tag: 'item', attrs: { jid } })) },
    ]);
  }
  const item = child(iq, 'item');
  const jid = item?.attrs.jid;
  const target = ctx.core.directory.account(jid);
  if (!item || !target) return iqError(iq, 400, 'bad-request');
  if (item.attrs.action === 'block') account.blocklist.add(target.pnJid);
  else account.blocklist.delete(target.pnJid);
  return iqResult(iq);
}

export function mediaConnIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  return iqResult(iq, [
    {
      tag: 'media_conn',
      attrs: { auth: randomBytes(24).toString('base64url'), ttl: '300', auth_ttl: '21600', max_buckets: '12' },
      content: [{ tag: 'host', attrs: { hostname: ctx.core.mediaHost, maxContentLengthBytes: '104857600' } }],
    },
  ]);
}

/** `w:sync:app:state`: uploads are appended in order; a sync returns what is newer than the asker's version. */
export function appStateIq(ctx: IqContext, iq: BinaryNode, store: AppStateStore): BinaryNode {
  const account = ctx.device.account.number;
  const out: BinaryNode[] = [];
  for (const collection of childrenOf(child(iq, 'sync'), 'collection')) {
    const name = collection.attrs.name ?? '';
    const from = Number(collection.attrs.version ?? 0);
    const uploads = childrenOf(collection, 'patch');
    if (uploads.length > 0) {
      let version = from;
      for (const patch of uploads) version = store.append(account, name, version, bytesOf(patch) ?? Buffer.alloc(0));
      out.push({ tag: 'collection', attrs: { name, version: String(version) } });
      continue;
    }
    const patches = store.since(account, name, from);
    out.push({
      tag: 'collection',
      attrs: { name, version: String(store.version(account, name)), has_more_patches: 'false' },
      ...(patches.length
        ? {
            content: [
              {
                tag: 'patches',
                attrs: {},
                content: patches.map((p) => ({ tag: 'patch', attrs: {}, content: p.bytes })),
              },
            ],
          }
        : {}),
    });
  }
  return iqResult(iq, [{ tag: 'sync', attrs: {}, content: out }]);
}

export function statusIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const text = textOf(child(iq, 'status'));
  if (iq.attrs.type === 'set' && text !== undefined) ctx.device.account.about = text;
  return iqResult(iq);
}

export function pictureIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const target = iq.attrs.target;
  const groupTarget = target?.endsWith('@g.us') ? ctx.core.groups.get(target) : undefined;
  const account = groupTarget ? undefined : target ? ctx.core.directory.account(target) : ctx.device.account;
  if (iq.attrs.type === 'set') {
    const bytes = bytesOf(child(iq, 'picture'));
    if (account) account.picture = bytes;
    return iqResult(iq, bytes ? [{ tag: 'picture', attrs: { id: String(Date.now()) } }] : undefined);
  }
  if (!account?.picture) return iqError(iq, 404, 'item-not-found');
  const id = createHash('sha1').update(account.picture).digest('hex').slice(0, 12);
  return iqResult(iq, [
    {
      tag: 'picture',
      attrs: {
        id,
        type: 'image',
        url: `https://${ctx.core.mediaHost}/pps/${account.number}/${id}.jpg`,
        direct_path: `/pps/${account.number}/${id}.jpg`,
      },
    },
  ]);
}
