import type { Delivery } from '../../src/events/webhooks/delivery.js';

/** Delivery `n` of a `message.exchange` webhook, as a queue test enqueues it. */
export function testDelivery(n: number, instanceId = 'inst-1', createdAt = new Date().toISOString()): Delivery {
  return {
    id: `d-${n}`,
    instanceId,
    label: 'default',
    event: 'message.exchange',
    url: 'https://hooks.example/x',
    authorizationSealed: undefined,
    body: JSON.stringify({ event: 'message.exchange', data: { n } }),
    attempts: 0,
    createdAt,
  };
}
