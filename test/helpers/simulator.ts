import { mintCertAuthority, startSimulator } from '../../simulator/index.js';
import type { NodeEnv, ReceivedRecord, Simulator, StanzaEvent } from '../../simulator/index.js';

import { quietSignalConsole } from './quiet-signal.js';

quietSignalConsole();

/** One noise root for the whole test process: a node trusts one root per process. */
const certs = mintCertAuthority();

export interface TestSimulator {
  simulator: Simulator;
  nodeEnv: NodeEnv;
  /** The control API over HTTP, as the chaos harness and benches use it. */
  control: SimulatorClient;
  close(): Promise<void>;
}

/** A WhatsApp simulator on free loopback ports. */
export async function startTestSimulator(options: { loginsPerSecond?: number } = {}): Promise<TestSimulator> {
  const sim = await startSimulator({ certs, ...options });
  return {
    simulator: sim.simulator,
    nodeEnv: sim.nodeEnv,
    control: new SimulatorClient(sim.httpUrl),
    close: sim.close,
  };
}

/** The simulator's control API. */
export class SimulatorClient {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  async ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request<T>(method, path, body);
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  addPhone(number?: string, name?: string): Promise<{ number: string; jid: string; lid: string }> {
    return this.ok('POST', '/phones', { ...(number ? { number } : {}), ...(name ? { name } : {}) });
  }

  received(number: string, after = 0): Promise<ReceivedRecord[]> {
    return this.ok('GET', `/phones/${number}/received?after=${after}`);
  }

  failures(number: string): Promise<unknown[]> {
    return this.ok('GET', `/phones/${number}/failures`);
  }

  send(number: string, body: Record<string, unknown>): Promise<{ id: string }> {
    return this.ok('POST', `/phones/${number}/send`, body);
  }

  log(after = 0): Promise<{ last: number; events: StanzaEvent[] }> {
    return this.ok('GET', `/log?after=${after}`);
  }
}
