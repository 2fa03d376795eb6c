import type { InstanceRecord } from '../store/records.js';
import type { EventAttachments, InstanceEvent } from './instance-events.js';

/** Where the actor's API events go: the event bus (WebSockets) and the durable webhook queue. */
export interface InstanceEventSink {
  /**
   * `attachments`: what only some consumers get (a received file's bytes, by value or by reference).
   * `stillOwner` throws once the actor may no longer act (a durable sink retries until then).
   */
  emit(
    instance: InstanceRecord,
    event: InstanceEvent,
    attachments?: EventAttachments,
    stillOwner?: () => void,
  ): Promise<void>;
}
