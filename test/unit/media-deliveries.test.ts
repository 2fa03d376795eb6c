import { expect } from 'chai';
import { pino } from 'pino';
import { EnvelopeBuilder } from '../../src/events/envelope-builder.js';
import { messageExchange } from '../../src/events/instance-events.js';
import type { InstanceEvent } from '../../src/events/instance-events.js';
import type { Delivery, DeliveryQueue } from '../../src/events/webhooks/delivery.js';
import { DeliveryWorker } from '../../src/events/webhooks/delivery-worker.js';
import { MEDIA_EXPIRED } from '../../src/events/webhooks/media-attachment.js';
import { WebhookDispatcher } from '../../src/events/webhooks/webhook-dispatcher.js';
import type { WebhookSender } from '../../src/events/webhooks/webhook-sender.js';
import type { MediaBlobStore } from '../../src/media/media-blobs.js';
import { MediaCounters } from '../../src/media/media-counters.js';
import { SecretBox, SecretPurpose } from '../../src/security/secret-box.js';
import { DEFAULT_SETTINGS } from '../../src/store/records.js';
import type { InstanceRecord, WebhookRecord } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../helpers/until.js';

const secrets = new SecretBox(Buffer.alloc(32, 7));
const FILE = Buffer.from('the received file');

const instance: InstanceRecord = {
  id: 'inst-1',
  accountId: 'acct-1',
  name: 'sales',
  tokenHash: 'h',
  tokenSealed: secrets.seal('instance-token', SecretPurpose.InstanceToken),
  ownerEpoch: 1,
  config: {
    settings: DEFAULT_SETTINGS,
    proxy: undefined,
    websocket: undefined,
    helpdesk: undefined,
    chatbot: undefined,
    storage: undefined,
  },
  connection: { state: 'connected', numberJid: undefined, updatedAt: '' },
  createdAt: '',
};

const hook = (label: string, base64: boolean): WebhookRecord => ({
  instanceId: instance.id,
  label,
  enabled: true,
  url: `https://hooks.example.com/${label}`,
  authorizationSealed: undefined,
  byEvents: false,
  events: [],
  base64,
  createdAt: '',
  updatedAt: '',
});

const event: InstanceEvent = {
  event: 'message.exchange',
  data: messageExchange(
    {
      id: 'MSG1',
      fromMe: false,
      timestamp: 0,
      chat: { jid: '5511@s.whatsapp.net', type: 'private' },
      sender: { jid: '5511@s.whatsapp.net' },
      type: 'media',
      text: 'look',
      media: { kind: 'image', mimetype: 'image/png', size: FILE.length },
    },
    'msgnet',
  ),
};

class MemoryQueue implements DeliveryQueue {
  queued: Delivery[] = [];
  completed: Delivery[] = [];
  retried: Delivery[] = [];
  async enqueue(d: Delivery[]) {
    this.queued.push(...d);
  }
  async enqueueOnce(d: Delivery[]) {
    this.queued.push(...d);
    return true;
  }
  async take(max: number) {
    return this.queued.splice(0, max);
  }
  async complete(d: Delivery) {
    this.completed.push(d);
  }
  async retry(d: Delivery) {
    this.retried.push(d);
  }
  async bury() {}
  async deadLetters() {
    return [];
  }
  async redeliver() {
    return 0;
  }
  async depth() {
    return this.queued.length;
  }
  async close() {}
}

const fakeStore = (webhooks: WebhookRecord[]) => ({ webhooks: { list: async () => webhooks } }) as unknown as Store;

describe('base64 webhook deliveries: one kept copy, resolved when sent', () => {
  it('the dispatcher queues the same body for every webhook and a reference to the copy only for base64 ones', async () => {
    const queue = new MemoryQueue();
    const dispatcher = new WebhookDispatcher(
      fakeStore([hook('bytes', true), hook('plain', false)]),
      queue,
      new EnvelopeBuilder(secrets, () => 'https://sb.example.com'),
    );
    await dispatcher.emit(instance, event, { webhookMediaBlob: 'MSG1', websocketMediaBase64: FILE.toString('base64') });
    const [bytes, plain] = queue.queued;
    expect(bytes!.mediaBlob).to.equal('MSG1');
    expect(plain).to.not.have.property('mediaBlob');
    expect(bytes!.body).to.equal(plain!.body);
    expect(bytes!.body).to.not.include(FILE.toString('base64'));
  });

  async function deliver(blobs: MediaBlobStore, delivery: Partial<Delivery> = {}) {
    const queue = new MemoryQueue();
    const posted: string[] = [];
    const sender = {
      send: async (_url: string, body: string) => (posted.push(body), { ok: true as const }),
    } as unknown as WebhookSender;
    const counters = new MediaCounters();
    const worker = new DeliveryWorker({
      queue,
      sender,
      secrets,
      policy: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 },
      log: pino({ level: 'silent' }),
      concurrency: 4,
      leaseMs: 1000,
      pollMs: 5,
      mediaBlobs: blobs,
      mediaCounters: counters,
    });
    const body = JSON.stringify(new EnvelopeBuilder(secrets, () => 'x').build(instance, event));
    await queue.enqueue([
      {
        id: 'd1',
        instanceId: instance.id,
        label: 'bytes',
        event: 'message.exchange',
        url: 'https://h.example.com',
        authorizationSealed: undefined,
        body,
        attempts: 0,
        createdAt: '',
        mediaBlob: 'MSG1',
        ...delivery,
      },
    ]);
    worker.start();
    await until(() => queue.completed.length + queue.retried.length > 0, 'the delivery to be settled', 2000, 5);
    await worker.stop();
    return { queue, posted: posted.map((p) => JSON.parse(p)), counters };
  }

  it('the worker puts the kept file into media.base64 of the POSTed body', async () => {
    const asked: string[] = [];
    const { posted, queue } = await deliver({
      put: async () => undefined,
      get: async (i, m) => (asked.push(`${i}/${m}`), FILE),
    });
    expect(asked).to.deep.equal(['inst-1/MSG1']);
    expect(posted[0].data.message.media.base64).to.equal(FILE.toString('base64'));
    expect(queue.completed).to.have.length(1);
  });

  it('sends without the bytes, saying why, once the copy has expired, and counts it', async () => {
    const { posted, counters } = await deliver({ put: async () => undefined, get: async () => undefined });
    expect(posted[0].data.message.media).to.include({ base64: null, error: MEDIA_EXPIRED });
    expect(counters.snapshot().blobExpired).to.equal(1);
  });

  it('retries later when the copy cannot be read (the store is away)', async () => {
    const { posted, queue } = await deliver({
      put: async () => undefined,
      get: async () => {
        throw new Error('connection lost');
      },
    });
    expect(posted).to.deep.equal([]);
    expect(queue.retried[0]!.lastError).to.equal('could not read the kept media: connection lost');
  });
});
