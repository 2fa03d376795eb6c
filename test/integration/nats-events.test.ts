import { expect } from 'chai';
import { connect } from 'nats';
import type { NatsConnection, StoredMsg } from 'nats';
import { pino } from 'pino';
import { NatsPublisher } from '../../src/events/brokers/nats-publisher.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { natsMissing, startNatsServer } from '../helpers/nats-server.js';
import type { NatsServer } from '../helpers/nats-server.js';
import { testDelivery } from '../helpers/deliveries.js';
import { until } from '../helpers/until.js';

const STREAM = 'SWITCHBOARD_EVENTS';

const missing = natsMissing();
// Skipped only where the server is not installed, saying so in the suite's title.
(missing ? describe.skip : describe)(
  `events to NATS JetStream (a server of its own)${missing ? `: skipped, ${missing}` : ''}`,
  function () {
    this.timeout(120_000);
    let nats: NatsServer;
    let node: TestNode;
    let reader: NatsConnection | undefined;

    before(async function () {
      nats = await startNatsServer();
      node = await startTestNode({
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
        RATE_LIMIT_CREATE_PER_MINUTE: '1000',
        NATS_URL: nats.url,
        WEBHOOK_RETRY_BASE_MS: '100',
        WEBHOOK_RETRY_MAX_MS: '1000',
        WEBHOOK_MAX_ATTEMPTS: '100',
        WEBHOOK_TIMEOUT_MS: '2000',
      });
    });

    after(async () => {
      await reader?.close().catch(() => undefined);
      await node?.stop();
      await nats?.destroy();
    });

    /** Every message the stream holds on `subject` (or on any), oldest first (read one by one: any server version). */
    async function readAll(subject?: string): Promise<StoredMsg[]> {
      reader ??= await connect({ servers: nats.url });
      const jsm = await reader.jetstreamManager();
      const { state } = await jsm.streams.info(STREAM);
      const out: StoredMsg[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(STREAM, { seq }).catch(() => undefined);
        if (m && (subject === undefined || m.subject === subject)) out.push(m);
      }
      return out;
    }

    it('stores each event once on switchboard.<account>.<instance>.<event>, in order, across a server restart', async () => {
      const account = await node.createAccount('north.co');
      const token = await node.createInstance(account, { name: 'ops.1' });
      // Turned on while the instance is connected: the next events go to the stream.
      await node.api.get('/api/instance/connect/ops.1', { token });
      expect((await node.api.post('/api/sandbox/link/ops.1', {}, { token })).status).to.equal(200);
      const saved = await node.api.post(
        '/api/events/nats/ops.1',
        { enabled: true, events: ['message.exchange'] },
        { token },
      );
      expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
      expect(saved.body.nats).to.deep.equal({ enabled: true, events: ['message.exchange'] });
      expect((await node.api.get('/api/events/getNats/ops.1', { token })).body.nats).to.deep.equal({
        enabled: true,
        events: ['message.exchange'],
      });

      const subject = 'switchboard.north%2Eco.ops%2E1.message.exchange';
      const sent: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await node.api.post(
          '/api/sandbox/inbound/ops.1',
          { from: '5511966660000', text: `n${i}` },
          { token },
        );
        sent.push(res.body.messageId as string);
      }
      let msgs: StoredMsg[] = [];
      await until(async () => (msgs = await readAll(subject)).length >= 20, 'twenty messages in the stream', 20_000);
      expect(msgs.map((m) => m.json<any>().data.id)).to.deep.equal(sent);
      for (const m of msgs) {
        expect(m.subject).to.equal(subject);
        expect(m.header.get('Nats-Msg-Id')).to.be.a('string').with.length.above(10);
        expect(m.header.get('Content-Type')).to.equal('application/json');
        expect(m.json<any>().instanceData).to.include({ instance: 'ops.1', token });
      }

      // The server goes away during a burst: the events wait in the durable queue and are stored once each.
      await nats.stop();
      const held: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await node.api.post(
          '/api/sandbox/inbound/ops.1',
          { from: '5511966660000', text: `h${i}` },
          { token },
        );
        held.push(res.body.messageId as string);
      }
      await new Promise((r) => setTimeout(r, 1500));
      const health = await node.api.get('/health');
      expect(health.status).to.equal(200);
      expect(health.body.brokers.nats).to.include({ status: 'down', events: 'held in the delivery queue' });
      await nats.start();
      await reader?.close().catch(() => undefined);
      reader = undefined;
      await until(async () => (msgs = await readAll(subject)).length >= 30, 'every held event in the stream', 60_000);
      const ids = msgs.map((m) => m.json<any>().data.id as string);
      await until(
        async () => (await node.api.get('/health')).body.brokers.nats.status === 'up',
        'the broker reported up again',
        10_000,
      );
      expect(ids).to.have.length(30);
      expect(new Set(ids)).to.deep.equal(new Set([...sent, ...held]));
    });

    it('a publish retried under the same event id is stored once (the stream deduplicates on Nats-Msg-Id)', async () => {
      const publisher = new NatsPublisher({
        url: nats.url,
        stream: STREAM,
        maxAgeMs: 0,
        maxBytes: -1,
        timeoutMs: 2000,
        log: pino({ level: 'silent' }),
      });
      try {
        const d = {
          ...testDelivery(1, 'dedupe'),
          eventId: 'evt-dedupe-1',
          transport: 'nats' as const,
          topic: 'a.b.message.exchange',
        };
        expect(await publisher.publish(d)).to.deep.include({ ok: true });
        expect(await publisher.publish({ ...d, id: 'another-delivery', attempts: 1 })).to.deep.include({ ok: true });
        expect(await readAll('switchboard.a.b.message.exchange')).to.have.length(1);
      } finally {
        await publisher.close();
      }
    });

    it("an account's switch publishes its instances without a block of their own; an instance's own block wins", async () => {
      const account = await node.createAccount('south');
      const [inherits, optedOut] = [
        await node.createInstance(account, { name: 'inherits' }),
        await node.createInstance(account, { name: 'opted-out' }),
      ];
      for (const [name, token] of [
        ['inherits', inherits],
        ['opted-out', optedOut],
      ] as const) {
        await node.api.get(`/api/instance/connect/${name}`, { token });
        expect((await node.api.post(`/api/sandbox/link/${name}`, {}, { token })).status).to.equal(200);
      }
      expect(
        (await node.api.post('/api/events/nats/opted-out', { enabled: false }, { token: optedOut })).status,
      ).to.equal(200);
      // The account's own token only: an instance's token cannot turn on its siblings' events.
      const refused = await node.api.post('/api/events/nats', { enabled: true }, { token: inherits });
      expect(refused.status).to.equal(403);
      const saved = await node.api.post(
        '/api/events/nats',
        { enabled: true, events: ['message.exchange'] },
        { token: account },
      );
      expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
      expect(saved.body).to.deep.include({ nats: { enabled: true, events: ['message.exchange'] }, scope: 'account' });
      expect((await node.api.get('/api/events/getNats', { token: account })).body.nats).to.deep.equal({
        enabled: true,
        events: ['message.exchange'],
      });
      const inherited = await node.api.get('/api/events/getNats/inherits', { token: inherits });
      expect(inherited.body).to.deep.include({
        nats: { enabled: true, events: ['message.exchange'] },
        source: 'account',
      });
      const own = await node.api.get('/api/events/getNats/opted-out', { token: optedOut });
      expect(own.body).to.deep.include({ nats: { enabled: false, events: [] }, source: 'instance' });

      const a = await node.api.post(
        '/api/sandbox/inbound/inherits',
        { from: '5511966660001', text: 'a' },
        { token: inherits },
      );
      const b = await node.api.post(
        '/api/sandbox/inbound/opted-out',
        { from: '5511966660001', text: 'b' },
        { token: optedOut },
      );
      expect([a.status, b.status]).to.deep.equal([200, 200]);
      let msgs: StoredMsg[] = [];
      await until(
        async () => (msgs = await readAll('switchboard.south.inherits.message.exchange')).length >= 1,
        "the inheriting instance's event in the stream",
        20_000,
      );
      expect(msgs.map((m) => m.json<any>().data.id)).to.deep.equal([a.body.messageId]);
      // Its sibling's own "off" holds: give its event (queued after a's) the same time, then look.
      await new Promise((r) => setTimeout(r, 500));
      const ids = (await readAll()).map((m) => m.json<any>().data?.id);
      expect(ids).to.include(a.body.messageId).and.not.include(b.body.messageId);
    });

    it('answers 503 on a node without NATS_URL', async () => {
      const plain = await startTestNode({});
      try {
        const token = await plain.createInstance(await plain.createAccount('plain'), { name: 'p1' });
        const res = await plain.api.post('/api/events/nats/p1', { enabled: true }, { token });
        expect(res.status).to.equal(503);
        expect(res.body.error.message).to.equal('NATS JetStream is not configured on this server (NATS_URL is unset)');
      } finally {
        await plain.stop();
      }
    });
  },
);
