/**
 * What bench/http.ts and bench/http-ab.ts share: the paths measured on a node, the node's one linked
 * instance, and one closed-loop autocannon run with the serving process's CPU time per request.
 */
import autocannon from 'autocannon';
import { connectAndLink } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from '../test/cluster/node-process.js';
import type { NodeProcess } from '../test/cluster/node-process.js';
import { cpuSeconds } from './process-cpu.js';

/** The highest value the configuration accepts: the benches measure the front end, not the limiter's 429s. */
export const NO_LIMIT = { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_CREATE_PER_MINUTE: '1000' };

export interface Target {
  name: string;
  /** The serving process, whose CPU time the run reads. */
  pid: number;
  url: string;
  method: 'GET' | 'POST';
  token?: string;
  body?: string;
}

export interface Load {
  target: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the serving process per answered request, µs (undefined without /proc). */
  cpuUs: number | undefined;
  /** Its user-mode part alone: the process's own code, without the kernel's socket work. */
  userUs: number | undefined;
}

/** An account, one linked sandbox instance named `bench`; returns the instance's token. */
export async function linkedInstance(node: NodeProcess): Promise<string> {
  const account = await node.api.post('/api/admin/accounts', { name: 'bench' }, { token: CLUSTER_ADMIN_TOKEN });
  if (account.status !== 201) throw new Error(`account: ${account.text}`);
  const created = await node.api.post('/api/instance/new', { name: 'bench' }, { token: account.body.account.token });
  if (created.status !== 201) throw new Error(`instance: ${created.text}`);
  const token = created.body.instance.token as string;
  await connectAndLink(node.api, node.api, 'bench', token, { number: '5511990000001' });
  return token;
}

/** `/health`, getSettings (a store-served read) and describe (an actor call) on the node's `bench` instance. */
export function targetsOf(label: string, node: NodeProcess, token: string): Target[] {
  return [
    { name: `${label} GET /health`, pid: node.pid, url: `${node.url}/health`, method: 'GET' },
    {
      name: `${label} getSettings`,
      pid: node.pid,
      url: `${node.url}/api/instance/getSettings/bench`,
      method: 'GET',
      token,
    },
    {
      name: `${label} describe (actor call)`,
      pid: node.pid,
      url: `${node.url}/api/cluster/probe/bench`,
      method: 'POST',
      token,
      body: JSON.stringify({ op: 'describe' }),
    },
  ];
}

/** One run: `connections` keep-alive connections for `seconds`. */
export async function load(t: Target, connections: number, seconds: number): Promise<Load> {
  const cpuBefore = cpuSeconds(t.pid);
  const result = await autocannon({
    url: t.url,
    method: t.method,
    connections,
    duration: seconds,
    headers: {
      ...(t.token ? { token: t.token } : {}),
      ...(t.body ? { 'content-type': 'application/json' } : {}),
    },
    ...(t.body ? { body: t.body } : {}),
  });
  const cpuAfter = cpuSeconds(t.pid);
  const perRequest = (seconds: number) => (seconds * 1e6) / result.requests.total;
  const used =
    cpuBefore && cpuAfter
      ? { user: cpuAfter.user - cpuBefore.user, system: cpuAfter.system - cpuBefore.system }
      : undefined;
  return {
    target: t.name,
    connections,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    cpuUs: used && perRequest(used.user + used.system),
    userUs: used && perRequest(used.user),
  };
}
