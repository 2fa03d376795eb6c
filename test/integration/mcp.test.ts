import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const ALICE = '5511860000001';
const BOB = '5511860000002';
const BOB_JID = `${BOB}@s.whatsapp.net`;

/** What a tool call gives back, as the SDK types it loosely. */
interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, any>;
}

describe('MCP endpoint: POST /mcp with the official SDK client and as plain JSON-RPC', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: string;

  /** An SDK client session on the node with a token in the `token` header (or as Bearer). */
  const connect = async (token: string, bearer = false) => {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${n.node.url}/mcp`), {
      requestInit: { headers: bearer ? { authorization: `Bearer ${token}` } : { token } },
    });
    await client.connect(transport);
    return client;
  };

  before(async () => {
    n = await startNetworkNode();
    alice = await n.linked('alice', ALICE);
    await n.linked('bob', BOB);
  });

  after(async () => {
    await n?.stop();
  });

  it('lists one tool per API operation, with the hosted product names and input schemas from the routes', async () => {
    const client = await connect(alice);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of [
        'send_text',
        'send_media',
        'send_buttons',
        'send_list',
        'group_list',
        'group_update_participants',
        'webhook_set',
        'instance_logout',
        'instance_list',
        'instance_connect',
        'chat_presence',
        'chat_list',
        'label_create',
        'chat_base64',
        'instance_get_s3',
      ]) {
        expect(names, name).to.include(name);
      }
      expect(new Set(names).size).to.equal(names.length);
      expect(names.some((name) => name.startsWith('sandbox_') || name.startsWith('admin_'))).to.equal(false);
      const sendText = tools.find((t) => t.name === 'send_text')!;
      expect(sendText.description).to.include('POST /api/message/text/:instance');
      expect(sendText.inputSchema.required).to.deep.equal(['instance']);
      expect(sendText.inputSchema.properties).to.include.keys('instance', 'number', 'message', 'text', 'delay');
      const history = tools.find((t) => t.name === 'chat_messages')!;
      expect(history.inputSchema.properties).to.include.keys('number', 'limit', 'before');
    } finally {
      await client.close();
    }
  });

  it('calls a send: the result is the REST answer, and the message reaches the network', async () => {
    const client = await connect(alice, true);
    try {
      const result = (await client.callTool({
        name: 'send_text',
        arguments: { instance: 'alice', number: BOB, message: 'from an agent' },
      })) as ToolResult;
      expect(result.isError ?? false).to.equal(false);
      const answer = JSON.parse(result.content[0]!.text);
      expect(answer).to.deep.include({ success: true, status: 'sent' });
      expect(answer.data).to.deep.include({ to: BOB_JID, content: 'from an agent' });
      expect(result.structuredContent).to.deep.equal(answer);
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({
        type: 'text',
        text: 'from an agent',
        messageId: answer.data.messageId,
      });

      // Query fields go in the query string; the agents' `ryzeapi_` prefix is accepted.
      const status = (await client.callTool({
        name: 'ryzeapi_chat_status',
        arguments: { instance: 'alice', messageId: answer.data.messageId },
      })) as ToolResult;
      expect(status.structuredContent).to.deep.include({ message_id: answer.data.messageId, direction: 'sent' });

      const list = (await client.callTool({ name: 'instance_list', arguments: {} })) as ToolResult;
      expect(list.structuredContent!.instances.map((i: any) => i.name)).to.deep.equal(['alice']);
    } finally {
      await client.close();
    }
  });

  it('a bad argument, an unknown instance or tool is a tool error, never a 500', async () => {
    const client = await connect(alice);
    try {
      const bad = (await client.callTool({
        name: 'send_text',
        arguments: { instance: 'alice', number: BOB, message: 'x', delay: 'soon' },
      })) as ToolResult;
      expect(bad.isError).to.equal(true);
      expect(bad.structuredContent).to.deep.include({ httpStatus: 400, success: false });
      expect(JSON.parse(bad.content[0]!.text).error.message).to.include('delay');

      const noNumber = (await client.callTool({
        name: 'send_text',
        arguments: { instance: 'alice', message: 'x' },
      })) as ToolResult;
      expect(noNumber.isError).to.equal(true);
      expect(noNumber.structuredContent!.error.message).to.equal('Number is required');

      const other = (await client.callTool({
        name: 'send_text',
        arguments: { instance: 'bob', number: ALICE, message: 'x' },
      })) as ToolResult;
      expect(other.isError).to.equal(true);
      expect(other.structuredContent!.httpStatus).to.be.oneOf([401, 403]);

      const noInstance = (await client.callTool({ name: 'send_text', arguments: { number: BOB } })) as ToolResult;
      expect(noInstance.isError).to.equal(true);
      expect(noInstance.content[0]!.text).to.equal('instance is required: the instance name');

      const unknown = (await client.callTool({ name: 'launch_rocket', arguments: {} })) as ToolResult;
      expect(unknown.isError).to.equal(true);
      expect(unknown.content[0]!.text).to.equal('Unknown tool: launch_rocket');
    } finally {
      await client.close();
    }
  });

  it('refuses a request without a valid token with the API answer (401)', async () => {
    const res = await fetch(`${n.node.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).to.equal(401);
    expect(res.headers.get('x-ratelimit-limit')).to.be.a('string');
    const bad = await fetch(`${n.node.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', token: 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(bad.status).to.equal(401);
  });

  it('answers plain JSON-RPC over HTTP as a minimal agent speaks it: JSON, or an event stream', async () => {
    const rpc = (body: unknown, accept = 'application/json') =>
      fetch(`${n.node.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, token: alice },
        body: JSON.stringify(body),
      });
    const init = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '0' } },
    });
    expect(init.status).to.equal(200);
    expect(init.headers.get('content-type')).to.include('application/json');
    const initialized = (await init.json()) as any;
    expect(initialized.result.serverInfo.name).to.equal('switchboard');
    expect(initialized.result.capabilities).to.have.property('tools');

    const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).to.equal(202);

    const called = await rpc({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'send_text', arguments: { instance: 'alice', number: BOB, message: 'plain rpc' } },
    });
    const json = (await called.json()) as any;
    expect(json.id).to.equal(2);
    expect(JSON.parse(json.result.content[0].text)).to.deep.include({ success: true, status: 'sent' });

    const streamed = await rpc(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'instance_list', arguments: {} } },
      'text/event-stream',
    );
    expect(streamed.headers.get('content-type')).to.include('text/event-stream');
    const text = await streamed.text();
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const answer = data.find((d) => d.id === 3);
    expect(answer.result.structuredContent.instances[0].name).to.equal('alice');

    const get = await fetch(`${n.node.url}/mcp`, { headers: { token: alice } });
    expect(get.status).to.equal(405);
  });
});
