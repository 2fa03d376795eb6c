import { randomUUID } from 'node:crypto';
import type { InstanceEventSink, MessageOnce } from '../instance-event-sink.js';
import type { InstanceRecord, WebhookRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import type { EnvelopeBuilder } from '../envelope-builder.js';
import { wantsEvent } from '../event-filter.js';
import type { EventAttachments, InstanceEvent } from '../instance-events.js';
import type { BrokerTransport, Delivery, DeliveryQueue } from './delivery.js';
import { brokerTopic } from '../brokers/broker-topic.js';
import { BoundedMap } from '../../util/bounded-map.js';

/** The URL of one delivery: with `byEvents`, the event name is appended as a last path segment. */
export function deliveryUrl(webhook: Pick<WebhookRecord, 'url' | 'byEvents'>, event: string): string {
  if (!webhook.byEvents) return webhook.url;
  const url = new URL(webhook.url);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${event}`;
  return url.toString();
}

/** An event goes to an enabled webhook whose events list wants it (the same rule as WebSockets). */
export function matches(webhook: WebhookRecord, event: string): boolean {
  return webhook.enabled && webhook.url !== '' && wantsEvent(webhook.events, event);
}

/**
 * Turns each event into one delivery per matching webhook and appends them to the durable queue before
 * the event counts as emitted (an error here fails the emit, and the actor logs it). The webhooks are read
 * from the store for every event, never from a copy: a change acknowledged on any node applies to every
 * event emitted after its answer, on every node.
 */
export class WebhookDispatcher implements InstanceEventSink {
  readonly #accounts = new BoundedMap<string, string>(10_000);
  #afterEnqueue: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly queue: DeliveryQueue,
    private readonly envelopes: EnvelopeBuilder,
    /** The brokers this node publishes to (their URL configured). */
    private readonly brokers: readonly BrokerTransport[] = [],
  ) {}

  /** Called after deliveries were queued (the local worker polls at once). */
  onEnqueue(fn: () => void): void {
    this.#afterEnqueue = fn;
  }

  /** The instance's webhooks as the store holds them now. */
  webhooks(instanceId: string): Promise<WebhookRecord[]> {
    return this.store.webhooks.list(instanceId);
  }

  /** The account's name, for brokers' routing keys (names do not change; kept for the node's life). */
  async #accountName(accountId: string): Promise<string> {
    let name = this.#accounts.get(accountId);
    if (name === undefined) {
      name = (await this.store.accounts.findById(accountId))?.name ?? accountId;
      this.#accounts.set(accountId, name);
    }
    return name;
  }

  /**
   * The brokers this event goes to: those on for the node, enabled for the instance (its own block, or
   * else its account's switch) and wanting the event.
   */
  async #brokers(instance: InstanceRecord, event: string): Promise<BrokerTransport[]> {
    if (this.brokers.length === 0) return [];
    // Read from the store, as the webhooks are: the actor's copy of the instance may be older than a change.
    const config = (await this.store.instances.findById(instance.id))?.config;
    const own = this.brokers.map((b) => config?.[b]);
    const account = own.some((block) => block === undefined)
      ? (await this.store.accounts.findById(instance.accountId))?.brokers
      : undefined;
    return this.brokers.filter((b, i) => {
      const block = own[i] ?? account?.[b];
      return block?.enabled === true && wantsEvent(block.events, event);
    });
  }

  async emit(
    instance: InstanceRecord,
    event: InstanceEvent,
    attachments?: EventAttachments,
    _stillOwner?: () => void,
    once?: MessageOnce,
  ): Promise<boolean> {
    const targets = (await this.webhooks(instance.id)).filter((w) => matches(w, event.event));
    const brokers = await this.#brokers(instance, event.event);
    if (targets.length === 0 && brokers.length === 0) {
      // Nothing to deliver, but the message's mark still tells its next copy that its event left.
      return once ? this.queue.enqueueOnce([], { ...once, instanceId: instance.id, at: Date.now() }) : true;
    }
    const body = JSON.stringify(this.envelopes.build(instance, event));
    const createdAt = new Date().toISOString();
    const eventId = randomUUID();
    const topic =
      brokers.length > 0 ? brokerTopic(await this.#accountName(instance.accountId), instance.name, event.event) : '';
    const published: Delivery[] = brokers.map((b) => ({
      id: randomUUID(),
      eventId,
      instanceId: instance.id,
      label: b,
      event: event.event,
      url: `${b}:${topic}`,
      authorizationSealed: undefined,
      transport: b,
      topic,
      body,
      attempts: 0,
      createdAt,
    }));
    const deliveries: Delivery[] = targets.map((w) => ({
      id: randomUUID(),
      eventId,
      instanceId: instance.id,
      label: w.label,
      event: event.event,
      url: deliveryUrl(w, event.event),
      authorizationSealed: w.authorizationSealed,
      ...(w.secretSealed !== undefined ? { signed: true } : {}),
      body,
      ...(w.base64 && attachments?.webhookMediaBlob !== undefined ? { mediaBlob: attachments.webhookMediaBlob } : {}),
      attempts: 0,
      createdAt,
    }));
    const all = [...published, ...deliveries];
    if (once && !(await this.queue.enqueueOnce(all, { ...once, instanceId: instance.id, at: Date.now() }))) {
      return false;
    }
    if (!once) await this.queue.enqueue(all);
    this.#afterEnqueue?.();
    return true;
  }
}
