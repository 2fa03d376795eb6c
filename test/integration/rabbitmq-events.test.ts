import { expect } from 'chai';
import { connect } from 'amqplib';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import { parseSamples, sampleSum } from '../helpers/prometheus-text.js';
import type { TestNode } from '../helpers/test-node.js';
import { rabbitMqMissing, startRabbitMq } from '../helpers/rabbitmq-server.js';
import type { RabbitMqServer } from '../helpers/rabbitmq-server.js';
import { until } from '../helpers/until.js';

const EXCHANGE = 'switchboard.events';

const missing = rabbitMqMissing();
// Skipped only where the broker is not installed, saying so in the suite's title.
(missing ? describe.skip : describe)(
  `events to RabbitMQ (a broker of its own)${missing ? `: skipped, ${missing}` : ''}`,
  function () {
    this.timeout(240_000);
    let rabbit: RabbitMqServer;
    let node: TestNode;
    let consumer: ChannelModel | undefined;
    let channel: Channel;
    const got: ConsumeMessage[] = [];

    before(async function () {
      rabbit = await startRabbitMq();
      node = await startTestNode({
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
        RATE_LIMIT_CREATE_PER_MINUTE: '1000',
        AMQP_URL: rabbit.url,
        WEBHOOK_RETRY_BASE_MS: '100',
        WEBHOOK_RETRY_MAX_MS: '1000',
        WEBHOOK_MAX_ATTEMPTS: '100',
        WEBHOOK_TIMEOUT_MS: '2000',
      });
    });

    after(async () => {
      await consumer?.close().catch(() => undefined);
      await node?.stop();
      await rabbit?.destroy();
    });

    /** A durable queue of the test's own, bound to everything of one instance, read into `got`. */
    async function consume(bindingKey: string) {
      consumer = await connect(rabbit.url);
      channel = await consumer.createChannel();
      await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('test-consumer', { durable: true });
      await channel.bindQueue(queue, EXCHANGE, bindingKey);
      await channel.consume(queue, (m) => {
        if (m) {
          got.push(m);
          channel.ack(m);
        }
      });
    }

    const bodies = () => got.map((m) => JSON.parse(m.content.toString()));

    it('publishes persistent, confirmed messages routed by escaped names, in order, and holds them across a broker restart', async () => {
      const account = await node.createAccount('acme.co');
      const token = await node.createInstance(account, { name: 'sales.eu' });
      await consume('acme%2Eco.sales%2Eeu.#');

      const saved = await node.api.post(
        '/api/events/rabbitmq/sales.eu',
        { enabled: true, events: ['message.exchange'], extra: 1 },
        { token },
      );
      expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
      expect(saved.body.rabbitmq).to.deep.equal({ enabled: true, events: ['message.exchange'] });
      expect(saved.headers.get('x-ignored-fields')).to.equal('extra');
      const read = await node.api.get('/api/events/getRabbitmq/sales.eu', { token });
      expect(read.body.rabbitmq).to.deep.equal({ enabled: true, events: ['message.exchange'] });
      const bad = await node.api.post('/api/events/rabbitmq/sales.eu', { enabled: true, events: ['nope'] }, { token });
      expect(bad.status).to.equal(400);

      await node.api.get('/api/instance/connect/sales.eu', { token });
      expect((await node.api.post('/api/sandbox/link/sales.eu', {}, { token })).status).to.equal(200);
      const sent: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await node.api.post(
          '/api/sandbox/inbound/sales.eu',
          { from: '5511955550000', text: `m${i}` },
          { token },
        );
        sent.push(res.body.messageId as string);
      }
      await until(() => got.length >= 20, 'twenty messages', 20_000);
      expect(bodies().map((b) => b.data.id)).to.deep.equal(sent);
      for (const m of got) {
        expect(m.fields.exchange).to.equal(EXCHANGE);
        expect(m.fields.routingKey).to.equal('acme%2Eco.sales%2Eeu.message.exchange');
        expect(m.properties.deliveryMode).to.equal(2);
        expect(m.properties.contentType).to.equal('application/json');
        expect(m.properties.messageId).to.be.a('string').with.length.above(10);
        const body = JSON.parse(m.content.toString());
        expect(body.event).to.equal('message.exchange');
        expect(body.instanceData).to.include({ instance: 'sales.eu', token });
      }
      expect(new Set(got.map((m) => m.properties.messageId)).size).to.equal(20);

      // The broker goes away during a burst: the events wait in the durable queue and all arrive after it.
      await consumer!.close();
      consumer = undefined;
      got.length = 0;
      await rabbit.stop();
      const held: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await node.api.post(
          '/api/sandbox/inbound/sales.eu',
          { from: '5511955550000', text: `h${i}` },
          { token },
        );
        held.push(res.body.messageId as string);
      }
      await new Promise((r) => setTimeout(r, 1500));
      expect(got).to.deep.equal([]);
      // The node stays healthy and says the broker is down and its events are held.
      const health = await node.api.get('/health');
      expect(health.status).to.equal(200);
      expect(health.body.brokers.rabbitmq).to.include({ status: 'down', events: 'held in the delivery queue' });
      expect(health.body.brokers.rabbitmq.error).to.be.a('string');
      expect(
        sampleSum(
          parseSamples((await node.api.get('/metrics', { token: ADMIN_TOKEN })).text),
          'switchboard_broker_up',
          {
            broker: 'rabbitmq',
          },
        ),
      ).to.equal(0);
      expect(
        sampleSum(
          parseSamples((await node.api.get('/metrics', { token: ADMIN_TOKEN })).text),
          'switchboard_webhook_queue_depth',
        ),
      ).to.be.at.least(10);
      await rabbit.start();
      await consume('acme%2Eco.sales%2Eeu.#');
      await until(() => held.every((id) => bodies().some((b) => b.data.id === id)), 'every held event', 60_000);
      const back = await node.api.get('/health');
      expect(back.body.brokers.rabbitmq).to.include({ status: 'up', events: 'published' });
      expect(
        sampleSum(
          parseSamples((await node.api.get('/metrics', { token: ADMIN_TOKEN })).text),
          'switchboard_broker_up',
          {
            broker: 'rabbitmq',
          },
        ),
      ).to.equal(1);
      // At least once, under one message_id per event.
      const ids = new Map<string, Set<string>>();
      for (const m of got) {
        const id = JSON.parse(m.content.toString()).data.id as string;
        ids.set(id, (ids.get(id) ?? new Set()).add(String(m.properties.messageId)));
      }
      for (const id of held) expect(ids.get(id)?.size, id).to.equal(1);
    });

    it('answers 503 on a node without AMQP_URL', async () => {
      const plain = await startTestNode({});
      try {
        const account = await plain.createAccount('plain');
        const token = await plain.createInstance(account, { name: 'p1' });
        for (const res of [
          await plain.api.post('/api/events/rabbitmq/p1', { enabled: true }, { token }),
          await plain.api.get('/api/events/getRabbitmq/p1', { token }),
        ]) {
          expect(res.status).to.equal(503);
          expect(res.body.error.message).to.equal('RabbitMQ is not configured on this server (AMQP_URL is unset)');
        }
      } finally {
        await plain.stop();
      }
    });
  },
);
