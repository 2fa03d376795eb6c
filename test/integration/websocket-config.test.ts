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

  it('an instance never configured reads as disabled with no events, on both read paths', async () => {
    for (const path of ['/api/events/getWebsocket/support', '/api/events/websocket/support']) {
      const res = await node.api.get(path, { token: supportToken });
      expectOk(res);
      expect(res.body.message).to.be.a('string').and.not.be.empty;
      expect(res.body.websocket).to.deep.equal({ enabled: false, events: [], base64: false, mediaBase64: false });
    }
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

  it('omitted fields keep their stored value; events: [] means every event; enterprise names are accepted', async () => {
    expect((await post('sales', { enabled: false })).body.websocket).to.deep.equal({
      enabled: false,
      events: ['message.exchange', 'instance.state'],
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
