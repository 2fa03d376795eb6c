import { connect } from 'nats';
import type { NatsConnection } from 'nats';
import { natsMissing, startNatsServer } from '../helpers/nats-server.js';
import type { NatsServer } from '../helpers/nats-server.js';
import type { ApiClient } from '../helpers/test-node.js';
import type { NetworkFault } from './chaos-network.js';

const STREAM = 'SWITCHBOARD_EVENTS';

/** What the stream holds of the instances' message.exchange events. */
export interface StreamRecord {
  /** Texts by instance name, as the webhook checker reads them. */
  received: Map<string, Set<string>>;
  /** Events stored per WhatsApp message id. */
  copies: Map<string, number>;
  stored: number;
}

/**
 * The NATS JetStream consumer of a run: a `nats-server -js` of its own, each instance's events turned on,
 * and the stream read at the end, so that the lost-inbound checker reads the broker as well as the webhook.
 */
export class ChaosNats {
  #reader: NatsConnection | undefined;
  readonly #record: StreamRecord = { received: new Map(), copies: new Map(), stored: 0 };
  #nextSeq = 1;

  private constructor(private readonly server: NatsServer) {}

  /** Undefined where nats-server is not installed (the run says so and goes on without it). */
  static async start(): Promise<ChaosNats | undefined> {
    if (natsMissing()) return undefined;
    return new ChaosNats(await startNatsServer());
  }

  static missing(): string | undefined {
    return natsMissing();
  }

  /** The broker restarted while events flow: they wait in the nodes' durable queues, and are stored once each. */
  readonly faults: NetworkFault[] = [
    {
      name: 'nats-restart',
      inject: async ({ random }) => {
        await this.server.stop();
        await new Promise((r) => setTimeout(r, random.int(500, 3000)));
        await this.server.start();
      },
    },
  ];

  get env(): Record<string, string> {
    return { NATS_URL: this.server.url };
  }

  async enable(api: ApiClient, name: string, token: string): Promise<void> {
    const res = await api.post(`/api/events/nats/${name}`, { enabled: true, events: ['message.exchange'] }, { token });
    if (res.status !== 200) throw new Error(`NATS events of ${name}: ${res.text}`);
  }

  /** Every message.exchange the stream holds, read on from where the last call stopped (message by message). */
  async read(): Promise<StreamRecord> {
    this.#reader ??= await connect({ servers: this.server.url });
    const jsm = await this.#reader.jetstreamManager();
    const info = await jsm.streams.info(STREAM).catch(() => undefined);
    if (!info || info.state.messages === 0) return this.#record;
    for (let seq = Math.max(this.#nextSeq, info.state.first_seq); seq <= info.state.last_seq; seq++) {
      // A stream nothing deletes from has no gaps: a failed read is tried again on the next call.
      const m = await jsm.streams.getMessage(STREAM, { seq }).catch(() => undefined);
      if (!m) break;
      this.#nextSeq = seq + 1;
      if (!m.subject.endsWith('.message.exchange')) continue;
      const body = m.json<any>();
      const name = body.instanceData.instance as string;
      const id = body.data.id as string;
      const record = this.#record;
      record.stored++;
      record.received.set(name, (record.received.get(name) ?? new Set<string>()).add(body.data.message.content.text));
      record.copies.set(id, (record.copies.get(id) ?? 0) + 1);
    }
    return this.#record;
  }

  async close(): Promise<void> {
    await this.#reader?.close().catch(() => undefined);
    await this.server.destroy();
  }
}
