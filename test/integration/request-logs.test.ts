import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { startNode } from '../../src/node.js';
import type { RunningNode } from '../../src/node.js';
import { ADMIN_TOKEN, ApiClient } from '../helpers/test-node.js';

type LogLine = Record<string, unknown> & { msg?: string };

describe('request ids and structured logs', () => {
  const lines: LogLine[] = [];
  let node: RunningNode;
  let api: ApiClient;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-logs-'));
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: dir,
      ADMIN_TOKEN,
      MSGNET_DRIVER: 'sandbox',
      NODE_ID: 'log-node',
      LOG_LEVEL: 'debug',
    });
    // JSON lines into memory, exactly as the node writes them to stdout.
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
    node = await startNode(config, { logger });
    api = new ApiClient(node.url);
  });

  after(async () => {
    await node?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const requestLine = (requestId: string) => lines.find((l) => l.msg === 'request' && l.requestId === requestId);

  it('echoes a valid X-Request-Id and logs the request under it, with the node id', async () => {
    const res = await api.get('/health', { headers: { 'x-request-id': 'client-id.42:a_b-c' } });
    expect(res.headers.get('x-request-id')).to.equal('client-id.42:a_b-c');
    const line = requestLine('client-id.42:a_b-c');
    expect(line, JSON.stringify(lines.slice(-3))).to.include({
      node: 'log-node',
      method: 'GET',
      path: '/health',
      status: 200,
    });
  });

  it('replaces a missing or unusable request id with a fresh UUID, echoed too', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'x-request-id': 'has spaces' },
      { 'x-request-id': 'x'.repeat(129) },
    ];
    for (const headers of variants) {
      const res = await api.get('/api/instance/list', { headers });
      const id = res.headers.get('x-request-id') ?? '';
      expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(requestLine(id)).to.include({ node: 'log-node', status: 401 });
    }
  });

  it('adds the instance id to the request log once the route has resolved the instance; actor logs carry it too', async () => {
    const account = (await api.post('/api/admin/accounts', { name: 'logs' }, { token: ADMIN_TOKEN })).body.account
      .token as string;
    const created = await api.post('/api/instance/new', { name: 'logged' }, { token: account });
    const instanceId = (await node.store.instances.findByName(
      (await node.store.accounts.findByName('logs'))!.id,
      'logged',
    ))!.id;
    const res = await api.get('/api/instance/connect/logged', {
      token: created.body.instance.token as string,
      headers: { 'x-request-id': 'connect-1' },
    });
    expect(res.status).to.equal(200);
    expect(requestLine('connect-1')).to.include({ node: 'log-node', instanceId, status: 200 });
    const activation = lines.find((l) => l.msg === 'actor activated' && l.instanceId === instanceId);
    expect(activation).to.include({ node: 'log-node', instanceId });
  });
});
