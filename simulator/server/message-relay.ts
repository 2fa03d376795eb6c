import { jidDecode } from '@whiskeysockets/baileys';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Account, Device, Endpoint } from './directory.js';
import type { SimCore } from './sim-core.js';
import { child, children, childrenOf, unixNow } from './stanzas.js';

/** One device's share of a relayed message: the encrypted parts addressed to it. */
interface Share {
  device: Device;
  encs: BinaryNode[];
  /** The jid the sender used for it (PN or LID addressing). */
  addressedAs: string;
}

/**
 * Relays a message a device sent: acknowledges it to the sender (the server has it now), then
 * queues each recipient device's share. The server never decrypts: each device gets the `enc` parts
 * the sender addressed to it, plus the group's sender-key ciphertext for group members.
 */
export function relayMessage(core: SimCore, sender: Device, endpoint: Endpoint, node: BinaryNode): void {
  const id = node.attrs.id;
  const to = node.attrs.to;
  if (!id || !to) {
    endpoint.send({ tag: 'ack', attrs: { id: id ?? '', class: 'message', error: '400' } });
    return;
  }
  const t = unixNow();
  const to0 = jidDecode(to);
  const isGroup = to0?.server === 'g.us';
  const isStatus = to === 'status@broadcast';
  const group = isGroup ? core.groups.get(to) : undefined;
  if (isGroup && (!group || !group.members.has(sender.account))) {
    endpoint.send({ tag: 'ack', attrs: { id, class: 'message', from: to, t, error: group ? '403' : '404' } });
    core.log.add({
      kind: 'message',
      device: sender.pnJid,
      connection: endpoint.id,
      id,
      to,
      refused: group ? 403 : 404,
    });
    return;
  }
  if (group?.announce && !['admin', 'superadmin'].includes(group.members.get(sender.account) ?? '')) {
    endpoint.send({ tag: 'ack', attrs: { id, class: 'message', from: to, t, error: '403' } });
    return;
  }
  const shares = collectShares(core, sender, node);
  const skmsg = children(node).find((c) => c.tag === 'enc' && c.attrs.type === 'skmsg');
  const deviceIdentity = child(node, 'device-identity');
  const base: Record<string, string> = { id, t, type: node.attrs.type ?? 'text' };
  if (node.attrs.category) base.category = node.attrs.category;
  if (node.attrs.edit) base.edit = node.attrs.edit;
  if (node.attrs.mediatype) base.mediatype = node.attrs.mediatype;
  const notify = sender.account.pushName;

  let delivered = 0;
  if (isGroup || isStatus) {
    const recipients = isGroup
      ? groupDevices(group!.members.keys(), sender)
      : [...shares.keys()].filter((d) => d !== sender);
    for (const device of recipients) {
      const share = shares.get(device);
      const encs = [...(share?.encs ?? []), ...(skmsg ? [skmsg] : [])];
      if (encs.length === 0) continue;
      const content = withIdentity(encs, deviceIdentity);
      const attrs: Record<string, string> = {
        ...base,
        from: to,
        participant: sender.pnJid,
        notify,
        ...(isGroup ? { addressing_mode: 'pn', participant_lid: sender.lidJid } : {}),
      };
      core.queues.deliver(device, { tag: 'message', attrs: observed(core, device, endpoint, attrs), content });
      delivered++;
    }
  } else {
    for (const share of shares.values()) {
      if (share.device === sender) continue;
      const own = share.device.account === sender.account;
      const lid = share.addressedAs.endsWith('@lid');
      const from = lid ? sender.lidJid : sender.pnJid;
      const peer = node.attrs.category === 'peer';
      const attrs: Record<string, string> = own
        ? { ...base, from, ...(peer ? {} : { recipient: node.attrs.recipient ?? to }) }
        : {
            ...base,
            from,
            notify,
            ...(lid ? { sender_pn: sender.account.pnJid } : { sender_lid: sender.account.lidJid }),
          };
      core.queues.deliver(share.device, {
        tag: 'message',
        attrs: observed(core, share.device, endpoint, attrs),
        content: withIdentity(share.encs, deviceIdentity),
      });
      delivered++;
    }
  }
  endpoint.send({ tag: 'ack', attrs: { id, class: 'message', from: to, t } });
  core.log.add({
    kind: 'message',
    device: sender.pnJid,
    connection: endpoint.id,
    ...(endpoint.node ? { node: endpoint.node } : {}),
    id,
    to,
    type: node.attrs.type,
    ...(node.attrs.category ? { category: node.attrs.category } : {}),
    recipients: delivered,
    encs: [...shares.values()].map((sh) => `${sh.device.pnJid}=${sh.encs.map((e) => e.attrs.type).join('+')}`),
  });
}

/** The `enc` parts of a message by recipient device: `participants/to` entries, or the stanza's own. */
function collectShares(core: SimCore, sender: Device, node: BinaryNode): Map<Device, Share> {
  const shares = new Map<Device, Share>();
  const add = (jid: string, encs: BinaryNode[]): void => {
    const device = core.directory.device(jid);
    if (!device) return;
    const share = shares.get(device);
    if (share) share.encs.push(...encs);
    else shares.set(device, { device, encs: [...encs], addressedAs: jid });
  };
  for (const to of childrenOf(child(node, 'participants'), 'to')) {
    const jid = to.attrs.jid;
    if (jid) add(jid, childrenOf(to, 'enc'));
  }
  const direct = children(node).filter((c) => c.tag === 'enc' && c.attrs.type !== 'skmsg');
  if (direct.length > 0 && !child(node, 'participants')) {
    const to = node.attrs.to!;
    if (node.attrs.category === 'peer') {
      // Peer messages stay within an account: a companion's go to the phone, the phone's to the device named.
      const target = sender.id === 0 ? core.directory.device(to) : sender.account.phone;
      if (target && target.account === sender.account) {
        shares.set(target, { device: target, encs: direct, addressedAs: target.pnJid });
      }
    } else if (to.endsWith('@g.us') && node.attrs.participant) {
      // A retry answer for one group member's device.
      add(node.attrs.participant, direct);
    } else {
      add(to, direct);
    }
  }
  return shares;
}

function groupDevices(members: Iterable<Account>, sender: Device): Device[] {
  const out: Device[] = [];
  for (const account of members) for (const d of account.linkedDevices()) if (d !== sender) out.push(d);
  return out;
}

function withIdentity(encs: BinaryNode[], identity: BinaryNode | undefined): BinaryNode[] {
  return identity && encs.some((e) => e.attrs.type === 'pkmsg') ? [...encs, identity] : encs;
}

/**
 * A device's receipt: the messages it names are answered (forgotten by the server), and the receipt
 * goes on to the devices of the account that sent them.
 */
export function routeReceipt(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode): void {
  const id = node.attrs.id;
  if (!id) return;
  const ids = [id, ...childrenOf(child(node, 'list'), 'item').map((i) => i.attrs.id ?? '')].filter(Boolean);
  const type = node.attrs.type;
  // A retry receipt answers nothing: the device waits for the sender's new copy.
  if (type === 'retry') for (const each of ids) core.queues.retried(from, each);
  else for (const each of ids) core.queues.settle(from, 'message', each);
  const to = node.attrs.to ?? '';
  core.log.add({
    kind: 'receipt',
    device: from.pnJid,
    connection: endpoint.id,
    ...(endpoint.node ? { node: endpoint.node } : {}),
    id,
    ids,
    to,
    type: type ?? 'delivery',
    ...(node.attrs.participant ? { participant: node.attrs.participant } : {}),
  });
  // Receipts the server itself consumes: history-sync and peer receipts need no onward delivery.
  if (type === 'hist_sync') return;
  const isGroup = to.endsWith('@g.us') || to === 'status@broadcast';
  const target = isGroup ? node.attrs.participant : to;
  const targetAccount = core.directory.account(target);
  if (!targetAccount) return;
  const fromJid = (target ?? '').endsWith('@lid') ? from.lidJid : from.pnJid;
  const attrs: Record<string, string> = { id, t: node.attrs.t ?? unixNow(), from: isGroup ? to : fromJid };
  if (isGroup) attrs.participant = fromJid;
  if (type) attrs.type = type;
  if (node.attrs.recipient) attrs.recipient = node.attrs.recipient;
  const explicit = core.directory.device(target);
  const targets =
    type === 'sender' || type === 'peer_msg' || type === 'retry'
      ? explicit
        ? [explicit]
        : []
      : targetAccount.linkedDevices();
  for (const device of targets) {
    if (device === from) continue;
    core.queues.deliver(device, {
      tag: 'receipt',
      attrs: observed(core, device, endpoint, attrs),
      ...(node.content ? { content: node.content } : {}),
    });
  }
  if (!isGroup && (type === 'read' || type === 'played')) toOwnDevices(core, from, endpoint, node, to);
}

/**
 * A device that read (or played) a message of a private chat tells the account's other devices too: they
 * get the receipt from the account itself, with the chat as its `recipient` (how WhatsApp shows a message
 * read on the phone to its linked devices).
 */
function toOwnDevices(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode, chat: string): void {
  const own = from.account;
  const attrs: Record<string, string> = {
    id: node.attrs.id ?? '',
    t: node.attrs.t ?? unixNow(),
    from: chat.endsWith('@lid') ? own.lidJid : own.pnJid,
    recipient: chat,
    type: node.attrs.type ?? 'read',
  };
  for (const device of own.linkedDevices()) {
    if (device === from) continue;
    core.queues.deliver(device, {
      tag: 'receipt',
      attrs: observed(core, device, endpoint, attrs),
      ...(node.content ? { content: node.content } : {}),
    });
  }
}

/** A device's ack answers one stanza the server sent it (an ack with `error` is a refusal, logged). */
export function handleAck(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode): void {
  const cls = node.attrs.class ?? '';
  const id = node.attrs.id ?? '';
  core.queues.settle(from, cls === 'receipt' ? receiptKeyTag(node) : cls, id, node.attrs.error !== undefined);
  core.log.add({
    kind: 'ack',
    device: from.pnJid,
    connection: endpoint.id,
    id,
    class: cls,
    ...(node.attrs.type ? { type: node.attrs.type } : {}),
    ...(node.attrs.error ? { error: node.attrs.error } : {}),
  });
}

/** Receipts are keyed by their type too: a read receipt may follow a delivery one with the same id. */
export function receiptKeyTag(node: BinaryNode): string {
  return `receipt:${node.attrs.type ?? 'delivery'}`;
}

/** A call rings this long unanswered, then it is over (WhatsApp's own timeout is about 45 s). */
export const RINGING_MS = 45_000;

/**
 * A call stanza (offer, reject, terminate...) goes to every device of the other party. The server keeps
 * each call's state: an answer to a call that is already over (rejected twice, or after its timeout) is
 * acknowledged and dropped, as WhatsApp does; the observer sees it as `ignored`.
 */
export function routeCall(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode): void {
  const to = node.attrs.to;
  const [info] = children(node);
  const target = core.directory.account(to);
  const t = unixNow();
  const callId = info?.attrs['call-id'];
  let ignored = false;
  if (callId && info) {
    const now = Date.now();
    for (const [id, call] of core.calls) if (now - call.ringingSince > 10 * RINGING_MS) core.calls.delete(id);
    const call = core.calls.get(callId);
    if (info.tag === 'offer') {
      if (!call) core.calls.set(callId, { ringingSince: now, ended: false });
    } else if (!call || call.ended || now - call.ringingSince > RINGING_MS) {
      ignored = true;
    } else if (info.tag === 'reject' || info.tag === 'accept' || info.tag === 'terminate') {
      call.ended = true;
    }
  }
  endpoint.send({
    tag: 'ack',
    attrs: { id: node.attrs.id ?? '', class: 'call', from: to ?? '', t, ...(info ? { type: info.tag } : {}) },
  });
  core.log.add({
    kind: 'call',
    device: from.pnJid,
    connection: endpoint.id,
    ...(endpoint.node ? { node: endpoint.node } : {}),
    id: node.attrs.id,
    to,
    action: info?.tag,
    callId,
    ...(ignored ? { ignored: true } : {}),
  });
  if (!target || !info || ignored) return;
  const id = node.attrs.id ?? `call-${t}-${Math.random().toString(36).slice(2)}`;
  for (const device of target.linkedDevices()) {
    if (device === from) continue;
    core.queues.deliver(device, {
      tag: 'call',
      attrs: observed(core, device, endpoint, {
        id,
        from: from.pnJid,
        t,
        ...(from.account !== target ? { notify: from.account.pushName } : {}),
      }),
      content: [{ ...info, attrs: { ...info.attrs, from: from.pnJid } }],
    });
  }
}

/** Presence and chat states are ephemeral: sent to devices that are connected now, never queued. */
export function routePresence(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode): void {
  const type = node.attrs.type ?? 'available';
  if (type === 'subscribe') {
    const target = core.directory.account(node.attrs.to);
    if (!target) return;
    let subs = core.presenceSubscribers.get(target);
    if (!subs) core.presenceSubscribers.set(target, (subs = new Set()));
    subs.add(from.account);
    const last = core.presence.get(target);
    if (last) sendNow(from, { tag: 'presence', attrs: { from: target.pnJid, type: last.type } });
    return;
  }
  if (node.attrs.name) from.account.pushName = node.attrs.name;
  if (type !== 'available' && type !== 'unavailable') return;
  core.presence.set(from.account, { type, t: Date.now() });
  core.log.add({ kind: 'presence', device: from.pnJid, connection: endpoint.id, type });
  for (const sub of core.presenceSubscribers.get(from.account) ?? []) {
    for (const device of sub.linkedDevices()) {
      sendNow(device, { tag: 'presence', attrs: { from: from.account.pnJid, type, last: unixNow() } });
    }
  }
}

export function routeChatstate(core: SimCore, from: Device, endpoint: Endpoint, node: BinaryNode): void {
  const to = node.attrs.to;
  const target = core.directory.account(to);
  const [state] = children(node);
  core.log.add({ kind: 'chatstate', device: from.pnJid, connection: endpoint.id, to, state: state?.tag });
  if (!target || !state) return;
  for (const device of target.linkedDevices()) {
    if (device === from) continue;
    sendNow(device, { tag: 'chatstate', attrs: { from: from.account.pnJid }, content: [state] });
  }
}

/**
 * A stanza for a simulated phone carries, off the wire, which connection (and node) its sender used:
 * the phone records it with what it decrypted, for the observer. Real devices never see these.
 */
function observed(
  core: SimCore,
  device: Device,
  endpoint: Endpoint,
  attrs: Record<string, string>,
): Record<string, string> {
  if (device.id !== 0 || !core.phones.has(device.account.number)) return attrs;
  return { ...attrs, 'x-sim-connection': endpoint.id, ...(endpoint.node ? { 'x-sim-node': endpoint.node } : {}) };
}

function sendNow(device: Device, node: BinaryNode): void {
  device.endpoint?.send(node);
}
