import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Agent, fetch as undiciFetch } from 'undici';
import { loadConfig } from '../../src/config/config.js';
import { startNode } from '../../src/node.js';
import type { RunningNode } from '../../src/node.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestNode extends RunningNode {
  dataDir: string;
  api: ApiClient;
  /** Creates an account through the admin API and returns its token. */
  createAccount(name: string, extra?: Record<string, unknown>): Promise<string>;
  /** Creates an instance with the account token and returns its TokenInstance. */
  createInstance(accountToken: string, body: Record<string, unknown>): Promise<string>;
  /** Stops the node and removes its data directory (unless `keepData`). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** The settings of an in-process test node on `dataDir`: a free loopback port, the sandbox driver, no log. */
export function testNodeEnv(dataDir: string): Record<string, string> {
  return { PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent', MSGNET_DRIVER: 'sandbox' };
}

/** An in-process node on a fresh temporary SQLite directory, listening on a free loopback port. */
export async function startTestNode(env: Record<string, string> = {}, dataDir?: string): Promise<TestNode> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'switchboard-test-'));
  const config = loadConfig({ ...testNodeEnv(dir), ...env });
  const node = await startNode(config, { logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  const api = new ApiClient(node.url);
  return {
    ...node,
    dataDir: dir,
    api,
    async createAccount(name, extra = {}) {
      const res = await api.post('/api/admin/accounts', { name, ...extra }, { token: ADMIN_TOKEN });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.account.token as string;
    },
    async createInstance(accountToken, body) {
      const res = await api.post('/api/instance/new', body, { token: accountToken });
      if (res.status !== 201) throw new Error(`instance creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.instance.token as string;
    },
    async stop(options = {}) {
      await node.close();
      if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests inspect arbitrary JSON; typing it loosely keeps assertions readable.

  body: any;
  text: string;
}

export interface RequestOptions {
  /** Sent as the `token` header. */
  token?: string;
  headers?: Record<string, string>;
  /** A raw body, sent as is (for malformed-input tests). */
  raw?: string;
}

/**
 * The tests' HTTP client pool. Its idle sockets are dropped after 4 s, far inside the nodes' 65 s
 * keep-alive: on two loaded cores a client timer can fire a second late, and a socket the server closes
 * just as the client reuses it fails the request ("other side closed") for no fault of the service's.
 */
const testAgent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });

export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.token = options.token;
    let payload: string | undefined = options.raw;
    if (body !== undefined && payload === undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await undiciFetch(this.baseUrl + path, { method, headers, body: payload, dispatcher: testAgent });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers as unknown as Headers, body: parsed, text };
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, undefined, options);
  }

  post(path: string, body?: unknown, options?: RequestOptions) {
    return this.request('POST', path, body, options);
  }

  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, undefined, options);
  }
}
