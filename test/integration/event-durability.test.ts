import { expect } from 'chai';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('events accepted from the network are kept through a store outage', () => {
  let n: NetworkNode;
  let receiver: WebhookReceiver;
  let token: string;

  before(async () => {
    n = await startNetworkNode({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_BASE_MS: '20' });
    receiver = await WebhookReceiver.start();
    token = await n.linked('durable', '5511900000201');
    expectOk(
      await n.node.api.post(
        '/api/events/webhook/durable',
        { url: receiver.url, enabled: true, events: ['message.exchange'] },
        { token },
      ),
      201,
    );
  });
  after(async () => {
    await n?.stop();
    await receiver?.stop();
  });

  it('an inbound message whose enqueue fails is retried until it is queued, then delivered once', async () => {
    const outbox = n.node.store.deliveries;
    const insert = outbox.insert.bind(outbox);
    let refused = 0;
    // The store refuses the outbox write three times (an outage), then recovers.
    outbox.insert = async (rows, dueAt) => {
      if (refused < 3) {
        refused++;
        throw new Error('database is locked');
      }
      return insert(rows, dueAt);
    };
    try {
      expectOk(
        await n.node.api.post('/api/sandbox/inbound/durable', { from: '5511900000202', text: 'kept' }, { token }),
      );
      await until(() => receiver.events('message.exchange').length > 0, 'the webhook');
      await new Promise((r) => setTimeout(r, 200));
      const texts = receiver.events('message.exchange').map((r) => r.body.data.message.content);
      expect(texts).to.deep.equal(['kept']);
      expect(refused).to.equal(3);
    } finally {
      outbox.insert = insert;
    }
  });
});
