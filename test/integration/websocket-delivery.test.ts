import { expect } from 'chai';
import type { ClientOptions } from 'ws';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { TestClient, gatewayFor, sleep } from '../helpers/ws-harness.js';
import type { GatewayHarness } from '../helpers/ws-harness.js';
import { NO_RATE_LIMITS } from './support.js';
import { until } from '../helpers/until.js';

/** After the upgrade: delivery, the per-instance filter, limits, heartbeat and closes (spec 4.10, 6, 7, 8). */

const REFRESH_MS = 100;
const ENV = { ...NO_RATE_LIMITS, WS_CONFIG_REFRESH_MS: String(REFRESH_MS) };

describe('WebSocket: events after the upgrade', function () {
  this.timeout(30_000);
  let node: TestNode;
  let gw: GatewayHarness;
  let account: string;
  let seq = 0;
  const clients: TestClient[] = [];

  before(async () => {
    node = await startTestNode(ENV);
    gw = await gatewayFor(node, ENV);
    account = await node.createAccount('acme');
  });

  afterEach(() => {
    for (const c of clients.splice(0)) c.ws.terminate();
  });

  after(async () => {
    await gw?.close();
    await node?.stop();
  });

  async function instanceId(name: string): Promise<string> {
    const acct = await node.store.accounts.findByName('acme');
    return (await node.store.instances.findByName(acct!.id, name))!.id;
  }

  /** Creates an instance with the WebSocket enabled and links it on the sandbox network. */
  async function linked(name: string, websocket: Record<string, unknown> = {}): Promise<string> {
    const token = await node.createInstance(account, { name, websocketEnabled: true, ...websocket });
    expect((await node.api.get(`/api/instance/connect/${name}`, { token })).status).to.equal(200);
    const link = await node.api.post(
      `/api/sandbox/link/${name}`,
      { number: `55119${String(++seq).padStart(8, '0')}` },
      { token },
    );
    expect(link.status, JSON.stringify(link.body)).to.equal(200);
    return token;
  }

  async function open(name: string, token: string, options: ClientOptions = {}): Promise<TestClient> {
    const client = await TestClient.open(`${gw.wsUrl}/ws/${name}?token=${encodeURIComponent(token)}`, options);
    clients.push(client);
    return client;
  }

  async function inbound(name: string, token: string, text: string): Promise<string> {
    const res = await node.api.post(
      `/api/sandbox/inbound/${name}`,
      { from: '5511912345678', text, pushName: 'Ana' },
      { token },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.messageId as string;
  }

  const texts = (c: TestClient) =>
    c
      .events('message.exchange')
      .map((e) => (e.data as { message: { content: { text: string } } }).message.content.text);

  it('delivers each event as one text frame with the documented envelope', async () => {
    const token = await linked('sales');
    const client = await open('sales', token);
    const id = await inbound('sales', token, 'hello there');
    await until(() => client.events('message.exchange').length === 1, 'the message event');
    const envelope = client.events('message.exchange')[0]!;
    expect(Object.keys(envelope).sort()).to.deep.equal(['data', 'event', 'instanceData']);
    expect(envelope.instanceData).to.deep.equal({ instance: 'sales', token, baseUrl: node.url });
    const data = envelope.data as Record<string, any>;
    expect(data).to.deep.include({ id, direction: 'incoming', recipient: '5511912345678@s.whatsapp.net' });
    const chat = { jid: '5511912345678@s.whatsapp.net', lid: null, name: 'Ana', type: 'private', isCommunity: false };
    expect(data.chat).to.deep.equal(chat);
    expect(data.sender).to.deep.equal({ jid: '5511912345678@s.whatsapp.net', lid: null, name: 'Ana' });
    expect(data.message).to.deep.include({
      id,
      direction: 'incoming',
      chat,
      type: 'text',
      content: { text: 'hello there' },
      media: null,
      interactive: null,
    });
    expect(data.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // A text frame whose bytes are exactly the JSON envelope.
    expect(JSON.parse(client.raw.at(-1)!)).to.deep.equal(envelope);

    // instance.state reaches the socket too (logout → the owner reports the new state).
    await node.api.post('/api/instance/logout/sales', {}, { token });
    await until(() => client.events('instance.state').length > 0, 'an instance.state event');
    const state = client.events('instance.state')[0]!;
    expect(state.instanceData.instance).to.equal('sales');
    expect((state.data as { instance: string }).instance).to.equal('sales');
  });

  it('several clients of one instance all receive every event; other instances do not leak in', async () => {
    const token = await linked('team');
    const otherToken = await linked('elsewhere');
    const [a, b, c] = [await open('team', token), await open('team', token), await open('team', token)];
    const outsider = await open('elsewhere', otherToken);
    const teamId = await instanceId('team');
    expect(gw.gateway.clientCount(teamId)).to.equal(3);
    await inbound('team', token, 'one');
    await inbound('team', token, 'two');
    await inbound('elsewhere', otherToken, 'not for team');
    for (const client of [a, b, c]) await until(() => texts(client).length === 2, 'both messages on every client');
    for (const client of [a, b, c]) expect(texts(client)).to.deep.equal(['one', 'two']);
    await until(() => texts(outsider).length === 1, 'the other instance message');
    expect(texts(outsider)).to.deep.equal(['not for team']);
    // One subscription per instance per node, dropped with the last socket.
    expect(gw.gateway.isSubscribed(teamId)).to.equal(true);
    for (const client of [a, b, c]) {
      client.ws.close();
      await client.closed;
    }
    await until(() => !gw.gateway.isSubscribed(teamId), 'the subscription to be dropped');
    expect(gw.gateway.isSubscribed(await instanceId('elsewhere'))).to.equal(true);
  });

  it('the event filter of the instance applies to open sockets without reconnecting', async () => {
    const token = await linked('filtered', { websocketEvents: ['message.exchange'] });
    const client = await open('filtered', token);
    await inbound('filtered', token, 'first');
    await until(() => texts(client).length === 1, 'the first message');

    // Only message.status from now on: the next inbound message is not sent to the open socket.
    expect(
      (await node.api.post('/api/events/websocket/filtered', { enabled: true, events: ['message.status'] }, { token }))
        .status,
    ).to.equal(200);
    await sleep(REFRESH_MS * 4);
    await inbound('filtered', token, 'hidden');
    // Back to every event (empty list): the next one arrives, and the hidden one never did.
    expect(
      (await node.api.post('/api/events/websocket/filtered', { enabled: true, events: [] }, { token })).status,
    ).to.equal(200);
    await sleep(REFRESH_MS * 4);
    await inbound('filtered', token, 'third');
    await until(() => texts(client).includes('third'), 'the message after the filter was widened');
    expect(texts(client)).to.deep.equal(['first', 'third']);

    // Disabled: the socket stays open (no re-authentication after the upgrade) but gets nothing.
    expect((await node.api.post('/api/events/websocket/filtered', { enabled: false }, { token })).status).to.equal(200);
    await sleep(REFRESH_MS * 4);
    await inbound('filtered', token, 'while disabled');
    await sleep(200);
    expect(texts(client)).to.deep.equal(['first', 'third']);
    expect(client.ws.readyState).to.equal(client.ws.OPEN);
  });

  it('sends enterprise.* events only when the list names them; other events with an empty list', async () => {
    const token = await node.createInstance(account, { name: 'billing', websocketEnabled: true });
    const id = await instanceId('billing');
    const client = await open('billing', token);
    const envelope = (event: string): EventEnvelope => ({
      event,
      data: { n: event },
      instanceData: { instance: 'billing', token, baseUrl: node.url },
    });
    await node.runtime.events.publish(id, envelope('enterprise.trial.started'));
    await node.runtime.events.publish(id, envelope('group.flow'));
    await until(() => client.envelopes.length === 1, 'the group event');
    expect(client.envelopes.map((e) => e.event)).to.deep.equal(['group.flow']);
    await node.api.post(
      '/api/events/websocket/billing',
      { enabled: true, events: ['enterprise.trial.started'] },
      { token },
    );
    await sleep(REFRESH_MS * 4);
    await node.runtime.events.publish(id, envelope('group.flow'));
    await node.runtime.events.publish(id, envelope('enterprise.trial.started'));
    await until(() => client.envelopes.length === 2, 'the enterprise event');
    expect(client.envelopes.map((e) => e.event)).to.deep.equal(['group.flow', 'enterprise.trial.started']);
  });

  it('client frames up to 4096 bytes are ignored; a larger one closes the connection (1009)', async () => {
    const token = await linked('chatty');
    const client = await open('chatty', token);
    client.ws.send('x'.repeat(4096));
    client.ws.send(Buffer.alloc(4096));
    await inbound('chatty', token, 'still here');
    await until(() => texts(client).length === 1, 'an event after the accepted frames');
    expect(client.ws.readyState).to.equal(client.ws.OPEN);
    client.ws.send('x'.repeat(4097));
    const closed = await client.closedWithin(5000);
    expect(closed.code).to.equal(1009);
    await until(async () => gw.gateway.clientCount(await instanceId('chatty')) === 0, 'the socket to be unregistered');
  });

  it('instance deleted while connected: the socket is closed with 1001', async () => {
    const token = await linked('doomed');
    const client = await open('doomed', token);
    const id = await instanceId('doomed');
    const res = await node.api.delete('/api/instance/delete/doomed', { token: account });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const closed = await client.closedWithin(5000);
    expect(closed.code).to.equal(1001);
    await until(() => !gw.gateway.isSubscribed(id), 'the subscription to be dropped');
  });

  it('a client whose send buffer is full is unregistered and closed (1011, or 1006 when it never drains); the others keep receiving', async () => {
    const token = await node.createInstance(account, { name: 'firehose', websocketEnabled: true });
    const id = await instanceId('firehose');
    // A separate gateway with a small buffer limit, on the same node.
    const small = await gatewayFor(node, ENV, { maxBufferedBytes: 64 * 1024 });
    try {
      const url = `${small.wsUrl}/ws/firehose?token=${encodeURIComponent(token)}`;
      const stuck = await TestClient.open(url);
      const healthy = await TestClient.open(url);
      clients.push(stuck, healthy);
      // The stuck client stops reading: TCP back-pressure fills the server's send buffer.
      stuck.ws.pause();
      const big = 'x'.repeat(256 * 1024);
      let sent = 0;
      while (small.gateway.clientCount(id) === 2) {
        if (sent >= 400) throw new Error('the stuck client was never unregistered');
        await node.runtime.events.publish(id, {
          event: 'message.exchange',
          data: { n: sent++, big },
          instanceData: { instance: 'firehose', token, baseUrl: node.url },
        });
        await sleep(5);
      }
      expect(small.gateway.clientCount(id)).to.equal(1);
      // The healthy client got every event, in order.
      await until(() => healthy.envelopes.length === sent, 'every event on the healthy client', 20_000);
      expect(healthy.envelopes.map((e) => (e.data as { n: number }).n)).to.deep.equal([...Array(sent).keys()]);
      stuck.ws.resume();
      const closed = await stuck.closedWithin(10_000);
      expect(closed.code).to.be.oneOf([1011, 1006]);
      // The stuck client got a prefix of the events, never all of them.
      expect(stuck.envelopes.length).to.be.lessThan(sent);
      expect(healthy.ws.readyState).to.equal(healthy.ws.OPEN);
    } finally {
      await small.close();
    }
  });
});

describe('WebSocket: heartbeat and shutdown', function () {
  this.timeout(30_000);
  const ENV_HB = { ...NO_RATE_LIMITS, WS_PING_INTERVAL_MS: '50', WS_PONG_TIMEOUT_MS: '400' };
  let node: TestNode;
  let gw: GatewayHarness;
  let token: string;

  before(async () => {
    node = await startTestNode(ENV_HB);
    gw = await gatewayFor(node, ENV_HB);
    const account = await node.createAccount('acme');
    token = await node.createInstance(account, { name: 'pulse', websocketEnabled: true });
  });

  after(async () => {
    await gw?.close();
    await node?.stop();
  });

  const url = () => `${gw.wsUrl}/ws/pulse?token=${encodeURIComponent(token)}`;

  it('pings every interval; a client that answers stays, one that never answers is dropped after the PONG timeout', async () => {
    const answering = await TestClient.open(url());
    const silent = await TestClient.open(url(), { autoPong: false });
    const started = Date.now();
    const closed = await silent.closedWithin(5000);
    const elapsed = Date.now() - started;
    // Dropped without a close frame: the client reports 1006 (abnormal closure).
    expect(closed.code).to.equal(1006);
    expect(elapsed).to.be.within(350, 2000);
    expect(silent.pings).to.be.greaterThan(2);
    await sleep(600);
    expect(answering.ws.readyState).to.equal(answering.ws.OPEN);
    expect(answering.pings).to.be.greaterThan(10);
    answering.ws.close();
    await answering.closed;
  });

  it('node shutdown closes every socket with 1001 and refuses new upgrades', async () => {
    const a = await TestClient.open(url());
    const b = await TestClient.open(url());
    expect(gw.gateway.size).to.equal(2);
    await gw.gateway.close();
    expect((await a.closedWithin(5000)).code).to.equal(1001);
    expect((await b.closedWithin(5000)).code).to.equal(1001);
    expect(gw.gateway.size).to.equal(0);
    let refused: Error | undefined;
    await TestClient.open(url()).then(
      (c) => c.ws.terminate(),
      (err: Error) => (refused = err),
    );
    expect(refused?.message).to.match(/^upgrade refused with (404|503)$/);
  });
});
