import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { hashToken } from '../../src/security/tokens.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { NO_RATE_LIMITS, expectOk } from './support.js';

/** Shared set-up of the network-operations suites (not a test file itself). */

export interface NetworkNode {
  node: TestNode;
  account: string;
  /** Creates an instance and links it to `number` through the sandbox; returns its token. */
  linked(name: string, number: string): Promise<string>;
  /** Creates an instance that is never connected; returns its token. */
  idle(name: string): Promise<string>;
  /** The sandbox outbox of an instance, optionally to one chat. */
  outbox(name: string, token: string, to?: string): Promise<any[]>;
  /** Makes the next `operation` of the instance's sandbox session fail with `message`. */
  fault(name: string, token: string, operation: string, message: string): Promise<void>;
  /** Collects the instance's events from now on, as WebSocket fan-out receives them. */
  record(token: string): Promise<EventEnvelope[]>;
  stop(): Promise<void>;
}

export async function startNetworkNode(env: Record<string, string> = {}): Promise<NetworkNode> {
  const node = await startTestNode({ ...NO_RATE_LIMITS, ...env });
  const account = await node.createAccount(`acct-${Math.random().toString(36).slice(2, 8)}`);
  return {
    node,
    account,
    async linked(name, number) {
      const token = await node.createInstance(account, { name });
      expectOk(await node.api.get(`/api/instance/connect/${name}`, { token }));
      const link = await node.api.post(`/api/sandbox/link/${name}`, { number }, { token });
      expect(link.status, link.text).to.equal(200);
      return token;
    },
    idle: (name) => node.createInstance(account, { name }),
    async outbox(name, token, to) {
      const res = await node.api.get(`/api/sandbox/outbox/${name}${to ? `?to=${encodeURIComponent(to)}` : ''}`, {
        token,
      });
      expectOk(res);
      return res.body.messages as any[];
    },
    async fault(name, token, operation, message) {
      expectOk(await node.api.post(`/api/sandbox/fault/${name}`, { operation, message }, { token }));
    },
    async record(token) {
      const instance = await node.store.instances.findByTokenHash(hashToken(token));
      const events: EventEnvelope[] = [];
      await node.runtime.events.subscribe(instance!.id, (e) => events.push(e));
      return events;
    },
    stop: () => node.stop(),
  };
}
