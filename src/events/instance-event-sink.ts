import type { InstanceRecord } from '../store/records.js';
import type { EmissionClaim } from '../store/store.js';
import type { EventAttachments, InstanceEvent } from './instance-events.js';

/** The message an event is of, and what the extensions are owed of it (see EmissionClaim). */
export type MessageOnce = Omit<EmissionClaim, 'instanceId' | 'at'>;

/** Where the actor's API events go: the event bus (WebSockets) and the durable webhook queue. */
export interface InstanceEventSink {
  /**
   * `attachments`: what only some consumers get (a received file's bytes, by value or by reference).
   * `stillOwner` throws once the actor may no longer act (a durable sink retries until then).
   * `once`: a message's event, queued with the message's emitted mark in one store transaction; the answer
   * is false when that message's event was queued before (nothing left: not queued, not published).
   */
  emit(
    instance: InstanceRecord,
    event: InstanceEvent,
    attachments?: EventAttachments,
    stillOwner?: () => void,
    once?: MessageOnce,
  ): Promise<boolean | void>;
}
