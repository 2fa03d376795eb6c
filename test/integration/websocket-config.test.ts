import { expect } from 'chai';
import { INSTANCE_EVENTS } from '../../src/events/event-names.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { NO_RATE_LIMITS, TOKEN_FORMS, expectError, expectOk, withToken } from './support.js';

describe('WebSocket configuration endpoints', function () {
  this.timeout(30_000);
  let node: TestNode;
  let account: string;
  let other: string;
  let salesToken: string;
  let supportToken: string;

  before(async () => {
    node = await startTestNode(NO_RATE_LIMITS);
    account = await node.createAccount('acme');
    other = await node.createAccount('globex');
    salesToken = await node.createInstance(account, { name: 'sales' });
    supportToken = await node.createInstance(account, { name: 'support' });
    await node.createInstance(other, { name: 'foreign' });
  });

  after(async () => {
    await node.stop();
  });

  const post = (instance: string, body: unknown, token = account) =>
    node.api.post(`/api/events/websocket/${instance}`, body, { token });

  it('an instance never configured is a 404 on both read paths; a disabled one is a 200', async () => {
    // The catalog: 404 when never configured, which is not the same as disabled (200).
    for (const path of ['/api/events/getWebsocket/support', '/api/events/websocket/support']) {
      expectError(await node.api.get(path, { token: supportToken }), 404, 'WebSocket not configured for this instance');
    }
    // A creation body with a WebSocket block configures it, even disabled: read as stored.
    const offToken = await node.createInstance(account, { name: 'ws-off', websocketEnabled: false });
    for (const path of ['/api/events/getWebsocket/ws-off', '/api/events/websocket/ws-off']) {
      const res = await node.api.get(path, { token: offToken });
      expectOk(res);
      expect(res.body.message).to.equal('WebSocket configuration retrieved');
      expect(res.body.websocket).to.deep.equal({ enabled: false, events: [], base64: false, mediaBase64: false });
    }
    // Any websocket… field makes a block (websocketEnabled defaults to false there).
    const eventsToken = await node.createInstance(account, { name: 'ws-events', websocketEvents: ['message.status'] });
    const events = await node.api.get('/api/events/getWebsocket/ws-events', { token: eventsToken });
    expectOk(events);
    expect(events.body.websocket.enabled).to.equal(false);
    // A block refused at creation (log and continue) is not stored: still never configured.
    const badToken = await node.createInstance(account, {
      name: 'ws-bad',
      websocketEnabled: true,
      websocketEvents: ['nope'],
    });
    expectError(
      await node.api.get('/api/events/getWebsocket/ws-bad', { token: badToken }),
      404,
      'WebSocket not configured for this instance',
    );
    // null counts as absent, so it configures nothing either.
    const nullToken = await node.createInstance(account, { name: 'ws-null', websocketEnabled: null });
    expectError(
      await node.api.get('/api/events/websocket/ws-null', { token: nullToken }),
      404,
      'WebSocket not configured for this instance',
    );
    // Disabled through POST: configured, so 200.
    expectOk(await post('ws-null', { enabled: false }));
    const res = await node.api.get('/api/events/getWebsocket/ws-null', { token: nullToken });
    expectOk(res);
    expect(res.body.websocket).to.deep.equal({ enabled: false, events: [], base64: false, mediaBase64: false });
  });

  it('POST stores enabled, events and base64 (mediaBase64 alias) and every read shows them', async () => {
    const res = await post('sales', {
      enabled: true,
      events: ['message.exchange', 'instance.state', 'message.exchange'],
      mediaBase64: true,
    });
    expectOk(res);
    expect(res.body.message).to.be.a('string').and.not.be.empty;
    const expected = { enabled: true, events: ['message.exchange', 'instance.state'], base64: true, mediaBase64: true };
    expect(res.body.websocket).to.deep.equal(expected);
    expect((await node.api.get('/api/events/getWebsocket/sales', { token: salesToken })).body.websocket).to.deep.equal(
      expected,
    );
    expect((await node.api.get('/api/events/websocket/sales', { token: account })).body.websocket).to.deep.equal(
      expected,
    );
    const list = await node.api.get('/api/instance/list?instanceName=sales', { token: account });
    expect(list.body.instances[0].websocket).to.deep.equal({
      enabled: true,
      events: ['message.exchange', 'instance.state'],
      base64: true,
    });
    const record = await node.store.instances.findByName((await node.store.accounts.findByName('acme'))!.id, 'sales');
    expect(record!.config.websocket).to.deep.equal({
      enabled: true,
      events: ['message.exchange', 'instance.state'],
      base64: true,
    });
  });

  it('the body replaces the block: events omitted → every event, base64 omitted → false; enterprise names accepted', async () => {
    // sales holds ['message.exchange', 'instance.state'] with base64 on (the test above).
    expect((await post('sales', { enabled: true })).body.websocket).to.deep.equal({
      enabled: true,
      events: [],
      base64: false,
      mediaBase64: false,
    });
    expect(
      (await post('sales', { enabled: true, events: ['message.status'], base64: true })).body.websocket,
    ).to.deep.equal({
      enabled: true,
      events: ['message.status'],
      base64: true,
      mediaBase64: true,
    });
    expect((await post('sales', { enabled: true, events: [], base64: false })).body.websocket).to.deep.equal({
      enabled: true,
      events: [],
      base64: false,
      mediaBase64: false,
    });
    const all = await post('sales', {
      enabled: true,
      events: [...INSTANCE_EVENTS, 'enterprise.trial.started'],
      base64: null,
    });
    expectOk(all);
    expect(all.body.websocket.events).to.deep.equal([...INSTANCE_EVENTS, 'enterprise.trial.started']);
    expect(all.body.websocket.base64).to.equal(false);
  });

  it('enabled: false clears events and base64 (even when the body gives them); enabling again starts from all', async () => {
    expectOk(await post('sales', { enabled: true, events: ['message.exchange'], mediaBase64: true }));
    const cleared = { enabled: false, events: [], base64: false, mediaBase64: false };
    expect((await post('sales', { enabled: false })).body.websocket).to.deep.equal(cleared);
    expect((await node.api.get('/api/events/getWebsocket/sales', { token: salesToken })).body.websocket).to.deep.equal(
      cleared,
    );
    expectOk(await post('sales', { enabled: true, events: ['message.exchange'], base64: true }));
    expect(
      (await post('sales', { enabled: false, events: ['message.exchange'], mediaBase64: true })).body.websocket,
    ).to.deep.equal(cleared);
    const record = await node.store.instances.findByName((await node.store.accounts.findByName('acme'))!.id, 'sales');
    expect(record!.config.websocket).to.deep.equal({ enabled: false, events: [], base64: false });
    // Unknown names are still refused while disabling: a bad body is a 400 whatever it asks.
    expectError(
      await post('sales', { enabled: false, events: ['nope'] }),
      400,
      "Invalid request body: field 'events': unknown event 'nope'",
    );
    expect((await post('sales', { enabled: true })).body.websocket).to.deep.equal({
      enabled: true,
      events: [],
      base64: false,
      mediaBase64: false,
    });
  });

  it('refuses bad bodies with 400 and changes nothing', async () => {
    const before = (await node.api.get('/api/events/websocket/sales', { token: account })).body.websocket;
    expectError(
      await post('sales', { enabled: true, base64: true, mediaBase64: false }),
      400,
      "Invalid request body: 'mediaBase64' and 'base64' are the same field; send only one",
    );
    expectError(
      await post('sales', { events: [] }),
      400,
      "Invalid request body: field 'enabled': expected boolean, received undefined",
    );
    expectError(
      await post('sales', { enabled: 'yes' }),
      400,
      "Invalid request body: field 'enabled': expected boolean, received string",
    );
    expectError(
      await post('sales', { enabled: true, events: ['message.exchange', 'nope'] }),
      400,
      "Invalid request body: field 'events': unknown event 'nope'",
    );
    expectError(
      await post('sales', { enabled: true, events: 'message.exchange' }),
      400,
      "Invalid request body: field 'events': expected array, received string",
    );
    expectError(await post('sales', [true]), 400, 'Invalid request body: expected a JSON object');
    expectError(
      await node.api.post('/api/events/websocket/sales', undefined, { token: account, raw: '{"enabled": tru' }),
      400,
      'Invalid request body: malformed JSON',
    );
    expect((await node.api.get('/api/events/websocket/sales', { token: account })).body.websocket).to.deep.equal(
      before,
    );
  });

  it('authenticates and checks ownership like every :instance endpoint', async () => {
    for (const form of TOKEN_FORMS) {
      const { path, options } = withToken('/api/events/getWebsocket/sales', salesToken, form);
      expectOk(await node.api.get(path, options));
    }
    expectError(
      await node.api.get('/api/events/getWebsocket/sales'),
      401,
      'Missing token in header, Authorization header, or query parameter',
    );
    expectError(
      await node.api.get('/api/events/getWebsocket/sales', { token: 'nope-nope-nope' }),
      401,
      'Invalid token',
    );
    expectError(
      await post('sales', { enabled: true }, supportToken),
      403,
      'Instance token does not match requested instance',
    );
    expectError(await post('foreign', { enabled: true }, account), 403, 'Instance does not belong to your account');
    expectError(await post('foreign', { enabled: true }, salesToken), 401, 'Invalid instance token');
    expectError(await post('missing', { enabled: true }, account), 404, 'Instance not found');
  });
});
