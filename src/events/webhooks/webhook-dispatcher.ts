import { randomUUID } from 'node:crypto';
import type { InstanceEventSink } from '../instance-event-sink.js';
import type { InstanceRecord, WebhookRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import type { EnvelopeBuilder } from '../envelope-builder.js';
import { wantsEvent } from '../event-filter.js';
import type { EventAttachments, InstanceEvent } from '../instance-events.js';
import type { Delivery, DeliveryQueue } from './delivery.js';

/** How long a node trusts its copy of an instance's webhooks; changes made on this node apply at once. */
const WEBHOOK_CACHE_MS = 2000;

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
 * the event counts as emitted (an error here fails the emit, and the actor logs it).
 */
export class WebhookDispatcher implements InstanceEventSink {
  readonly #cache = new Map<string, { at: number; webhooks: WebhookRecord[] }>();
  #afterEnqueue: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly queue: DeliveryQueue,
    private readonly envelopes: EnvelopeBuilder,
  ) {}

  /** Called after deliveries were queued (the local worker polls at once). */
  onEnqueue(fn: () => void): void {
    this.#afterEnqueue = fn;
  }

  /** Forgets this node's copy of an instance's webhooks (after a change). */
  invalidate(instanceId: string): void {
    this.#cache.delete(instanceId);
  }

  /** The instance's webhooks as this node last read them (at most 2 s old). */
  async webhooks(instanceId: string): Promise<WebhookRecord[]> {
    const cached = this.#cache.get(instanceId);
    if (cached && performance.now() - cached.at < WEBHOOK_CACHE_MS) return cached.webhooks;
    const webhooks = await this.store.webhooks.list(instanceId);
    this.#cache.set(instanceId, { at: performance.now(), webhooks });
    return webhooks;
  }

  async emit(instance: InstanceRecord, event: InstanceEvent, attachments?: EventAttachments): Promise<void> {
    const targets = (await this.webhooks(instance.id)).filter((w) => matches(w, event.event));
    if (targets.length === 0) return;
    const body = JSON.stringify(this.envelopes.build(instance, event));
    const createdAt = new Date().toISOString();
    const deliveries: Delivery[] = targets.map((w) => ({
      id: randomUUID(),
      instanceId: instance.id,
      label: w.label,
      event: event.event,
      url: deliveryUrl(w, event.event),
      authorizationSealed: w.authorizationSealed,
      body,
      ...(w.base64 && attachments?.webhookMediaBlob !== undefined ? { mediaBlob: attachments.webhookMediaBlob } : {}),
      attempts: 0,
      createdAt,
    }));
    await this.queue.enqueue(deliveries);
    this.#afterEnqueue?.();
  }
}
