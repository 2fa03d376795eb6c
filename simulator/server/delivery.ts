import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Device } from './directory.js';
import type { StanzaLog } from './stanza-log.js';

/** A stanza waiting on the server until the device says it has it. */
interface Pending {
  node: BinaryNode;
  /** How many times it was sent. */
  sends: number;
}

/**
 * WhatsApp's delivery semantics, per device: a stanza for a device is kept until the device
 * answers it (a receipt or an ack for a message, an ack for the rest), sent at once while the device
 * is connected and again, marked offline, at its next login if it was not answered. So a device that
 * disconnects before its receipt gets the message again; one that sent its receipt never does.
 */
export class DeliveryQueues {
  readonly #queues = new Map<Device, Map<string, Pending>>();
  /** Devices whose next deliveries are each sent twice (the "relayed twice" fault), with how many left. */
  readonly #duplicate = new Map<Device, number>();
  /** Per device, messages it asked to be sent again (a retry receipt) whose failed copy it has not refused yet. */
  readonly #retried = new Map<Device, Set<string>>();

  constructor(private readonly log: StanzaLog) {}

  /** Queues a stanza for a device and sends it now if the device is connected. */
  deliver(device: Device, node: BinaryNode): void {
    const key = keyOf(
      node.tag === 'receipt' ? `receipt:${node.attrs.type ?? 'delivery'}` : node.tag,
      node.attrs.id ?? '',
    );
    let queue = this.#queues.get(device);
    if (!queue) this.#queues.set(device, (queue = new Map<string, Pending>()));
    const pending: Pending = { node, sends: 0 };
    queue.set(key, pending);
    if (device.endpoint) this.#send(device, pending, false);
  }

  /** Sends everything still unanswered, marked offline; returns how many. */
  flush(device: Device): number {
    const queue = this.#queues.get(device);
    if (!queue || !device.endpoint) return 0;
    for (const pending of queue.values()) this.#send(device, pending, true);
    return queue.size;
  }

  /**
   * The device answered a stanza: it is forgotten. A refusal (an ack with an error) of a message the device
   * asked to be sent again answers the copy that failed, not the one sent anew: WhatsApp Web sends its retry
   * receipt first and refuses the failed copy after, when the new copy may already wait for it.
   */
  settle(device: Device, tag: string, id: string, refused = false): boolean {
    const retried = this.#retried.get(device);
    if (tag === 'message' && retried?.delete(id)) {
      if (retried.size === 0) this.#retried.delete(device);
      if (refused) return false;
    }
    return this.#queues.get(device)?.delete(keyOf(tag, id)) ?? false;
  }

  /** The device sent a retry receipt for a message: the sender's new copy is on its way. */
  retried(device: Device, id: string): void {
    let ids = this.#retried.get(device);
    if (!ids) this.#retried.set(device, (ids = new Set()));
    ids.add(id);
  }

  pendingCount(device: Device): number {
    return this.#queues.get(device)?.size ?? 0;
  }

  /** Forgets a device's queue (unlinked). */
  drop(device: Device): void {
    this.#queues.delete(device);
    this.#duplicate.delete(device);
    this.#retried.delete(device);
  }

  duplicateNext(device: Device, count: number): void {
    this.#duplicate.set(device, (this.#duplicate.get(device) ?? 0) + count);
  }

  #send(device: Device, pending: Pending, offline: boolean): void {
    const endpoint = device.endpoint;
    if (!endpoint) return;
    const node = offline ? { ...pending.node, attrs: { ...pending.node.attrs, offline: '1' } } : pending.node;
    const times = this.#takeDuplicate(device) ? 2 : 1;
    for (let i = 0; i < times; i++) {
      pending.sends++;
      this.log.add({
        kind: 'deliver',
        device: device.pnJid,
        connection: endpoint.id,
        ...(endpoint.node ? { node: endpoint.node } : {}),
        id: node.attrs.id,
        tag: node.tag,
        from: node.attrs.from,
        ...(node.attrs.type ? { type: node.attrs.type } : {}),
        offline,
        sends: pending.sends,
      });
      endpoint.send(node);
    }
  }

  #takeDuplicate(device: Device): boolean {
    const left = this.#duplicate.get(device) ?? 0;
    if (left <= 0) return false;
    if (left === 1) this.#duplicate.delete(device);
    else this.#duplicate.set(device, left - 1);
    return true;
  }
}

/**
 * A message is answered by a receipt or a message ack (both settle `message:<id>`); a receipt by an
 * ack naming its type (a read receipt may follow a delivery receipt with the same id).
 */
function keyOf(tag: string, id: string): string {
  return `${tag}:${id}`;
}
