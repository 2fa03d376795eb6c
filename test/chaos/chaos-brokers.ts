import { connect as amqpConnect } from 'amqplib';
import type { Channel } from 'amqplib';
import { connect as natsConnect } from 'nats';
import type { NatsConnection } from 'nats';
import { natsMissing, startNatsServer } from '../helpers/nats-server.js';
import { rabbitMqMissing, startRabbitMq } from '../helpers/rabbitmq-server.js';
import type { ChildServer } from '../helpers/child-server.js';
import type { ApiClient } from '../helpers/test-node.js';
import type { NetworkFault } from './chaos-network.js';

/** What a broker holds of the instances' message.exchange events. */
export interface BrokerRecord {
  /** Texts by instance name, as the webhook checker reads them. */
  received: Map<string, Set<string>>;
  /**
   * Per WhatsApp message id, the events stored for it that count as distinct: every copy on a stream that
   * deduplicates on the event id (NATS), distinct event ids where redelivery is allowed (RabbitMQ).
   */
  copies: Map<string, number>;
  stored: number;
}

/**
 * A broker consuming a run's events beside the webhooks: a server of the run's own, each instance's
 * events turned on, read at the end so that the lost-inbound checker reads it too, and a restart fault.
 */
export interface ChaosBroker {
  /** As the checkers name it (`NATS stream`). */
  readonly name: string;
  /** What each node needs to reach it. */
  readonly env: Record<string, string>;
  readonly faults: NetworkFault[];
  enable(api: ApiClient, instance: string, token: string): Promise<void>;
  /** Everything it holds so far (each call reads on from the last). */
  read(): Promise<BrokerRecord>;
  close(): Promise<void>;
}

/** The brokers installed here, started; the others named with why they are missing. */
export async function startChaosBrokers(): Promise<{ brokers: ChaosBroker[]; missing: string[] }> {
  const missing = [natsMissing(), rabbitMqMissing()].filter((m): m is string => m !== undefined);
  const brokers: ChaosBroker[] = [];
  if (!natsMissing()) brokers.push(new ChaosNats(await startNatsServer()));
  if (!rabbitMqMissing()) brokers.push(await ChaosRabbit.start());
  return { brokers, missing };
}

function restartFault(name: string, server: ChildServer): NetworkFault {
  return {
    name,
    inject: async ({ random }) => {
      await server.stop();
      await new Promise((r) => setTimeout(r, random.int(500, 3000)));
      await server.start();
    },
  };
}

function emptyRecord(): BrokerRecord {
  return { received: new Map(), copies: new Map(), stored: 0 };
}

function add(record: BrokerRecord, body: any): string {
  const name = body.instanceData.instance as string;
  record.stored++;
  record.received.set(name, (record.received.get(name) ?? new Set<string>()).add(body.data.message.content.text));
  return body.data.id as string;
}

const NATS_STREAM = 'SWITCHBOARD_EVENTS';

/** NATS JetStream: the stream deduplicates on Nats-Msg-Id (the event id), so each message is stored once. */
class ChaosNats implements ChaosBroker {
  readonly name = 'NATS stream';
  readonly faults: NetworkFault[];
  readonly #record = emptyRecord();
  #reader: NatsConnection | undefined;
  #nextSeq = 1;

  constructor(private readonly server: ChildServer) {
    this.faults = [restartFault('nats-restart', server)];
  }

  get env(): Record<string, string> {
    return { NATS_URL: this.server.url };
  }

  async enable(api: ApiClient, name: string, token: string): Promise<void> {
    const res = await api.post(`/api/events/nats/${name}`, { enabled: true, events: ['message.exchange'] }, { token });
    if (res.status !== 200) throw new Error(`NATS events of ${name}: ${res.text}`);
  }

  async read(): Promise<BrokerRecord> {
    this.#reader ??= await natsConnect({ servers: this.server.url });
    const jsm = await this.#reader.jetstreamManager();
    const info = await jsm.streams.info(NATS_STREAM).catch(() => undefined);
    if (!info || info.state.messages === 0) return this.#record;
    for (let seq = Math.max(this.#nextSeq, info.state.first_seq); seq <= info.state.last_seq; seq++) {
      // A stream nothing deletes from has no gaps: a failed read is tried again on the next call.
      const m = await jsm.streams.getMessage(NATS_STREAM, { seq }).catch(() => undefined);
      if (!m) break;
      this.#nextSeq = seq + 1;
      if (!m.subject.endsWith('.message.exchange')) continue;
      const id = add(this.#record, m.json<any>());
      this.#record.copies.set(id, (this.#record.copies.get(id) ?? 0) + 1);
    }
    return this.#record;
  }

  async close(): Promise<void> {
    await this.#reader?.close().catch(() => undefined);
    await this.server.destroy();
  }
}

const AMQP_EXCHANGE = 'switchboard.events';
const AMQP_QUEUE = 'chaos-consumer';

/**
 * RabbitMQ: a durable queue of the run's own bound to every event, declared before any is published.
 * Delivery is at least once: a message's event may come again, under the same `message_id` only.
 */
class ChaosRabbit implements ChaosBroker {
  readonly name = 'RabbitMQ queue';
  readonly faults: NetworkFault[];
  readonly #record = emptyRecord();
  readonly #eventIds = new Map<string, Set<string>>();

  private constructor(private readonly server: ChildServer) {
    this.faults = [restartFault('rabbitmq-restart', server)];
  }

  static async start(): Promise<ChaosRabbit> {
    const rabbit = new ChaosRabbit(await startRabbitMq());
    await rabbit.#withChannel(async (channel) => {
      await channel.assertExchange(AMQP_EXCHANGE, 'topic', { durable: true });
      await channel.assertQueue(AMQP_QUEUE, { durable: true });
      await channel.bindQueue(AMQP_QUEUE, AMQP_EXCHANGE, '#');
    });
    return rabbit;
  }

  get env(): Record<string, string> {
    return { AMQP_URL: this.server.url };
  }

  async enable(api: ApiClient, name: string, token: string): Promise<void> {
    const res = await api.post(
      `/api/events/rabbitmq/${name}`,
      { enabled: true, events: ['message.exchange'] },
      { token },
    );
    if (res.status !== 200) throw new Error(`RabbitMQ events of ${name}: ${res.text}`);
  }

  async read(): Promise<BrokerRecord> {
    await this.#withChannel(async (channel) => {
      for (;;) {
        const m = await channel.get(AMQP_QUEUE, { noAck: true });
        if (!m) return;
        if (m.properties.type !== 'message.exchange') continue;
        const id = add(this.#record, JSON.parse(m.content.toString()));
        const events = this.#eventIds.get(id) ?? new Set<string>();
        this.#eventIds.set(id, events.add(String(m.properties.messageId)));
        this.#record.copies.set(id, events.size);
      }
    });
    return this.#record;
  }

  /** One connection per use: a restart of the broker leaves no connection to mend. */
  async #withChannel(use: (channel: Channel) => Promise<void>): Promise<void> {
    const connection = await amqpConnect(this.server.url);
    try {
      await use(await connection.createChannel());
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.server.destroy();
  }
}
