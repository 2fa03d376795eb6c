import { WebSocket } from 'ws';
import type { ChaosCluster } from './chaos-cluster.js';
import type { Verdict } from './checkers.js';
import type { Random } from './random.js';
import type { ChaosInstance } from './workload.js';

/** One WebSocket connection of a subscriber: which instance it asked for, and the events it got. */
interface Connection {
  instance: string;
  node: string;
  /** `<event>|<data.id>` of each envelope, in arrival order. */
  events: string[];
  /** Envelopes that named another instance. */
  foreign: string[];
}

/**
 * WebSocket subscribers of the chaos run: one per instance, connected to a random node and connecting
 * again (to another random node) whenever the socket closes, as a dashboard would. What each connection
 * received is kept for the checkers.
 */
export class Subscribers {
  readonly connections: Connection[] = [];
  readonly #open = new Set<WebSocket>();
  #stopped = false;
  #loops: Promise<void>[] = [];

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly random: Random,
  ) {}

  start(instances: ChaosInstance[]): void {
    this.#loops = instances.map((instance) => this.#follow(instance));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const ws of this.#open) ws.terminate();
    await Promise.all(this.#loops);
  }

  async #follow(instance: ChaosInstance): Promise<void> {
    while (!this.#stopped) {
      const node = this.random.pick(this.cluster.running);
      const url = node.process!.url.replace(/^http/, 'ws');
      await this.#connection(`${url}/ws/${instance.name}?token=${instance.token}`, instance.name, node.id);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Resolves when the socket is closed (by the node, a fault, or stop()), or could not open. */
  #connection(url: string, instance: string, node: string): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(url, { handshakeTimeout: 3000 });
      const connection: Connection = { instance, node, events: [], foreign: [] };
      this.#open.add(ws);
      // A socket to a paused node would wait forever: give up on it after a while, as a client's ping would.
      const idle = setTimeout(() => ws.terminate(), 5000 + this.random.int(0, 5000));
      ws.on('open', () => this.connections.push(connection));
      ws.on('message', (raw) => {
        const envelope = JSON.parse((raw as Buffer).toString('utf8')) as {
          event: string;
          data: { id?: string };
          instanceData?: { instance: string };
        };
        if (envelope.instanceData && envelope.instanceData.instance !== instance) {
          connection.foreign.push(`${envelope.event} of ${envelope.instanceData.instance}`);
        }
        connection.events.push(`${envelope.event}|${envelope.data?.id ?? JSON.stringify(envelope.data)}`);
      });
      const done = () => {
        clearTimeout(idle);
        this.#open.delete(ws);
        resolve();
      };
      ws.on('close', done);
      ws.on('error', () => ws.terminate());
    });
  }
}

/**
 * WebSockets: an event delivered twice on one connection, or an event of another instance. (Events may be
 * missed across a reconnection: the stream is live, not a queue, so gaps are not counted.)
 */
export function checkWebSockets(connections: Connection[]): Verdict {
  const found: string[] = [];
  for (const c of connections) {
    const seen = new Set<string>();
    for (const e of c.events) {
      if (seen.has(e)) found.push(`${c.instance} on ${c.node}: ${e} twice on one connection`);
      seen.add(e);
    }
    for (const f of c.foreign) found.push(`${c.instance} on ${c.node}: got ${f}`);
  }
  return { checker: 'websocket duplicates or leaks', anomalies: found.length, examples: found.slice(0, 5) };
}
