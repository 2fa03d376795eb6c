import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * A TCP proxy between one node and a server (Redis, or the WhatsApp simulator), so that the nemesis can
 * partition that node alone: `stall()` stops moving bytes both ways (connections hang, as behind a dead
 * switch), `cut()` resets every connection, `stallSubscribers()` stalls only the Redis connections that
 * subscribed (a one-way partition: commands pass, pub/sub messages do not), `heal()` lets traffic flow.
 */
export class TcpProxy {
  readonly #pairs = new Set<[Socket, Socket]>();
  /** Client sockets that sent a (P/S)SUBSCRIBE: the pub/sub connections of a node. */
  readonly #subscribers = new WeakSet<Socket>();
  readonly #stalledPairs = new Set<[Socket, Socket]>();
  #stalled = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy(server, (server.address() as AddressInfo).port);
    server.on('connection', (client: Socket) => proxy.#accept(client, targetPort));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  #accept(client: Socket, targetPort: number): void {
    if (this.#stalled) {
      // A partitioned node's new connections hang too (no SYN-ACK behind a dead switch).
      client.pause();
    }
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    this.#pairs.add(pair);
    const close = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    // RESP sends the command name as a bulk string: its bytes are enough to tell a subscriber.
    const sniff = (chunk: Buffer) => {
      if (/\r\n[PS]?SUBSCRIBE\r\n/i.test(chunk.toString('latin1'))) {
        this.#subscribers.add(client);
        client.off('data', sniff);
      }
    };
    client.on('data', sniff);
    upstream.on('error', close).on('close', close);
    if (this.#stalled) upstream.pause();
    else this.#flow(pair);
  }

  #flow([a, b]: [Socket, Socket]): void {
    a.pipe(b);
    b.pipe(a);
  }

  stall(): void {
    this.#stalled = true;
    for (const [a, b] of this.#pairs) {
      // Unpiped and paused, the bytes wait in the sockets' buffers until heal().
      a.unpipe(b);
      b.unpipe(a);
      a.pause();
      b.pause();
    }
  }

  /** Stalls only the subscribed connections (their pub/sub traffic), until heal(). */
  stallSubscribers(): number {
    for (const pair of this.#pairs) {
      const [a, b] = pair;
      if (!this.#subscribers.has(a)) continue;
      a.unpipe(b);
      b.unpipe(a);
      a.pause();
      b.pause();
      this.#stalledPairs.add(pair);
    }
    return this.#stalledPairs.size;
  }

  cut(): void {
    for (const [a, b] of this.#pairs) {
      a.resetAndDestroy();
      b.destroy();
    }
    this.#pairs.clear();
  }

  heal(): void {
    for (const pair of this.#stalledPairs) if (this.#pairs.has(pair)) this.#flow(pair);
    this.#stalledPairs.clear();
    if (!this.#stalled) return;
    this.#stalled = false;
    for (const pair of this.#pairs) this.#flow(pair);
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
