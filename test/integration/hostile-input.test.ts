import { createServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { expect } from 'chai';
import { ADMIN_TOKEN } from '../helpers/test-node.js';
import type { ApiResponse, RequestOptions } from '../helpers/test-node.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

/**
 * A standing hostile-input run, driven by the OpenAPI document so that every route declared later inherits
 * it: a token matrix (no route may act for a wrong token), malformed bodies on every body route (never a
 * 500), and the address forms of private networks on every URL field (never a request to them).
 */

interface Operation {
  method: string;
  path: string;
  secured: boolean;
  bodyProps: Record<string, { type?: string | string[] }>;
  required: string[];
}

/** Every operation of the document, with the path's parameters filled for instance `a1`. */
function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const schema = op.requestBody?.content?.['application/json']?.schema ?? {};
      out.push({
        method: method.toUpperCase(),
        path: path.replace('{instance}', 'a1').replace(/\{[^}]+\}/g, 'x'),
        secured: (op.security ?? []).length > 0,
        bodyProps: schema.properties ?? {},
        required: schema.required ?? [],
      });
    }
  }
  return out;
}

/** The same path with `?token=` (or `&token=`) appended. */
const inUrl = (path: string, token: string) => `${path}${path.includes('?') ? '&' : '?'}token=${token}`;

function neverInternal(res: ApiResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.not.equal(500);
  if (res.body && typeof res.body === 'object' && res.body.error) {
    expect(res.body.error.code, `${what}: ${res.text}`).to.not.equal('internal');
  }
}

describe('hostile input over every route of the OpenAPI document', function () {
  this.timeout(120_000);
  let n: NetworkNode;
  let ops: Operation[];
  let accountB: string;
  let instanceB: string;
  let instanceA: string;
  let trap: Server;
  let trapHits = 0;
  let trapPort: number;
  let botId: string;

  before(async () => {
    n = await startNetworkNode();
    instanceA = await n.linked('a1', '5511900000001');
    accountB = await n.node.createAccount('hostile-b');
    instanceB = await n.node.createInstance(accountB, { name: 'b1' });
    const bot = await n.node.api.post(
      '/api/chatbot/set/a1',
      { url: 'https://viewer.example.com/flow', triggerType: 'all' },
      { token: instanceA },
    );
    botId = bot.body.bot.botId;
    const doc = await (await fetch(`${n.node.url}/openapi.json`)).json();
    ops = operations(doc);
    // Whatever reaches this server was fetched from a private address: the test fails on any hit.
    trap = createServer((_req, res) => res.end('{}'));
    trap.on('connection', () => trapHits++);
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapPort = (trap.address() as AddressInfo).port;
  });

  after(async () => {
    await n?.stop();
    await new Promise<void>((resolve) => (trap ? trap.close(() => resolve()) : resolve()));
  });

  const send = (op: Operation, path: string, options: RequestOptions, body?: unknown) =>
    n.node.api.request(op.method, path, op.method === 'GET' ? undefined : body, options);

  it('reads a document with the routes of every area', () => {
    expect(ops.length).to.be.greaterThan(80);
    expect(ops.filter((o) => o.secured).length).to.be.greaterThan(70);
  });

  it('token matrix: no token, unknown tokens and tokens in URLs get 401 on every secured route', async () => {
    const settingsBefore = (await n.node.api.get('/api/instance/getSettings/a1', { token: instanceA })).body;
    for (const op of ops.filter((o) => o.secured)) {
      const what = `${op.method} ${op.path}`;
      const cases: [string, ApiResponse][] = [
        ['no token', await send(op, op.path, {}, {})],
        ['unknown token', await send(op, op.path, { token: 'hostile-unknown-token-000000' }, {})],
        ['global token in the URL', await send(op, inUrl(op.path, ADMIN_TOKEN), {}, {})],
        ['instance token in the URL', await send(op, inUrl(op.path, instanceA), {}, {})],
        ['account token in the URL', await send(op, inUrl(op.path, n.account), {}, {})],
      ];
      for (const [who, res] of cases) {
        expect(res.status, `${what} with ${who}: ${res.text}`).to.equal(401);
      }
    }
    expect((await n.node.api.get('/api/instance/getSettings/a1', { token: instanceA })).body).to.deep.equal(
      settingsBefore,
    );
  });

  it("token matrix: another account's tokens never act on this account's instance", async () => {
    for (const op of ops.filter((o) => o.secured && o.path.includes('/a1'))) {
      const what = `${op.method} ${op.path}`;
      const foreignAccount = await send(op, op.path, { token: accountB }, {});
      expect(foreignAccount.status, `${what} with another account's token: ${foreignAccount.text}`).to.be.oneOf([
        403, 404,
      ]);
      const foreignInstance = await send(op, op.path, { token: instanceB }, {});
      expect(foreignInstance.status, `${what} with another instance's token: ${foreignInstance.text}`).to.be.oneOf([
        401, 403,
      ]);
      const global = await send(op, op.path, { token: ADMIN_TOKEN }, {});
      expect(global.status, `${what} with the global token: ${global.text}`).to.equal(403);
    }
    expect((await n.node.api.get('/api/instance/list', { token: n.account })).body.instances).to.have.length(1);
  });

  it('token matrix: admin routes refuse account and instance tokens with 403', async () => {
    for (const op of ops.filter((o) => o.path.startsWith('/api/admin/'))) {
      for (const token of [n.account, instanceA]) {
        const res = await send(op, op.path, { token }, {});
        expect(res.status, `${op.method} ${op.path}: ${res.text}`).to.equal(403);
      }
    }
  });

  it('malformed bodies on every body route: a 4xx in the envelope, never a 500', async () => {
    const bodyOps = ops.filter((o) => o.method !== 'GET' && Object.keys(o.bodyProps).length > 0);
    expect(bodyOps.length).to.be.greaterThan(30);
    for (const op of bodyOps) {
      const token = op.path.startsWith('/api/admin/') ? ADMIN_TOKEN : n.account;
      const what = `${op.method} ${op.path}`;
      const wrongTypes = Object.fromEntries(
        Object.entries(op.bodyProps).map(([k, p]) => [k, p.type === 'string' ? { nested: [1, 2] } : 'x'.repeat(5)]),
      );
      const bodies: [string, RequestOptions & { body?: unknown }][] = [
        ['malformed JSON', { raw: '{"a": ', headers: { 'content-type': 'application/json' } }],
        ['an array', { body: [1, 2, 3] }],
        ['a string', { raw: '"text"', headers: { 'content-type': 'application/json' } }],
        ['null', { raw: 'null', headers: { 'content-type': 'application/json' } }],
        ['every field of the wrong type', { body: wrongTypes }],
        ['a prototype key', { raw: '{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}' }],
        ['deep nesting', { raw: `${'['.repeat(5000)}${']'.repeat(5000)}` }],
        ['the wrong content type', { raw: '<xml/>', headers: { 'content-type': 'application/xml' } }],
      ];
      for (const [kind, { body, ...options }] of bodies) {
        const res = await send(op, op.path, { ...options, token }, body);
        neverInternal(res, `${what} with ${kind}`);
        expect(res.status, `${what} with ${kind}: ${res.text}`).to.be.within(400, 499);
      }
    }
    expect(({} as Record<string, unknown>).admin).to.equal(undefined);
  });

  it('private addresses in every URL field: refused, and nothing is fetched from them', async () => {
    const hosts = [
      `127.0.0.1:${trapPort}`,
      `localhost:${trapPort}`,
      `[::1]:${trapPort}`,
      `[::ffff:7f00:1]:${trapPort}`,
      `[::7f00:1]:${trapPort}`,
      `[::ffff:0:7f00:1]:${trapPort}`,
      `[2002:7f00:1::]:${trapPort}`,
      `[64:ff9b::7f00:1]:${trapPort}`,
      `[64:ff9b:1::7f00:1]:${trapPort}`,
      `2130706433:${trapPort}`,
      `0x7f.1:${trapPort}`,
      '169.254.169.254',
    ];
    const urlOps = ops.filter((o) => Object.keys(o.bodyProps).some((k) => /url$/i.test(k)));
    const refusedFor: Record<string, number> = {};
    expect(urlOps.length).to.be.greaterThan(8);
    for (const op of urlOps) {
      const token = op.path.startsWith('/api/account/') ? n.account : instanceA;
      for (const field of Object.keys(op.bodyProps).filter((k) => /url$/i.test(k))) {
        for (const host of hosts) {
          // The account webhook wants HTTPS: the address must be what refuses it there too.
          const url = `${op.path.startsWith('/api/account/') ? 'https' : 'http'}://${host}/hook`;
          const candidate: Record<string, unknown> = {
            number: '5511900000002',
            type: 'image',
            mediaType: 'image',
            message: 'caption',
            name: `hostile-${Math.random().toString(36).slice(2, 8)}`,
            enabled: true,
            events: ['message.exchange'],
            trigger: 'all',
            accountId: 1,
            token: 'chatwoot-token-0000',
            botId,
            inboxName: 'hostile',
            jid: '120363000000000077@newsletter',
            [field]: url,
          };
          if (field === 'webhookURL') candidate.webhookEnabled = true;
          if (field === 'helpdeskBaseUrl') {
            Object.assign(candidate, { helpdeskEnabled: true, helpdeskAccountId: 1, helpdeskToken: 'tok-0000' });
          }
          if (field === 'chatbotUrl') Object.assign(candidate, { chatbotEnabled: true });
          if (!op.path.startsWith('/api/events/webhook')) delete candidate.events;
          // `token` is the creation body's custom instance token; the helpdesk's token elsewhere.
          if (op.path === '/api/instance/new') delete candidate.token;
          // Only the fields the route knows, so that it is the URL that decides (one name of an aliased pair).
          if ('type' in op.bodyProps) delete candidate.mediaType;
          const body = Object.fromEntries(Object.entries(candidate).filter(([k]) => k in op.bodyProps));
          const res = await send(op, op.path, { token: op.path === '/api/instance/new' ? n.account : token }, body);
          const what = `${op.method} ${op.path} ${field}=${url}`;
          neverInternal(res, what);
          if (/internal networks|URL refused|Failed to download media from URL/.test(res.text)) {
            refusedFor[`${op.method} ${op.path}`] = (refusedFor[`${op.method} ${op.path}`] ?? 0) + 1;
          }
          if (op.path === '/api/instance/new') {
            // Creation logs and continues: the block is refused, the instance exists without it.
            const blocks = [res.body?.webhook, res.body?.helpdesk, res.body?.chatbot].filter(Boolean);
            for (const block of blocks) expect(block.enabled, `${what}: ${res.text}`).to.not.equal(true);
          } else {
            expect(res.status, `${what}: ${res.text}`).to.be.within(400, 499);
          }
        }
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(trapHits, 'requests that reached a private address').to.equal(0);
    // The refusals come from the address policy, not from some other field: every URL route says so.
    expect(Object.keys(refusedFor).sort(), JSON.stringify(refusedFor)).to.deep.equal(
      urlOps.map((o) => `${o.method} ${o.path}`).sort(),
    );
  });
});
