import type { Transport } from '../../transport/transport.js';
import type { MsgNetDriver, SessionOptions } from '../msgnet-driver.js';
import { SandboxSession } from './sandbox-session.js';

/**
 * The simulated network, for development, demos, benchmarks and every test. Numbers reach each other
 * over the cluster transport, so two sandbox instances owned by different nodes can talk.
 */
export class SandboxDriver implements MsgNetDriver {
  readonly name = 'sandbox' as const;

  constructor(private readonly transport: Transport) {}

  async open(options: SessionOptions): Promise<SandboxSession> {
    return new SandboxSession(options, this.transport);
  }

  async close(): Promise<void> {}
}
