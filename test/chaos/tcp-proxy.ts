import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * A TCP proxy between one node and Redis, so that the nemesis can partition that node alone: `stall()`
 * stops moving bytes both ways (connections hang, as behind a dead switch), `cut()` resets every
 * connection, `heal()` lets traffic flow again.
 */
export class TcpProxy {
  readonly #pairs = new Set<[Socket, Socket]>();
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

  cut(): void {
    for (const [a, b] of this.#pairs) {
      a.resetAndDestroy();
      b.destroy();
    }
    this.#pairs.clear();
  }

  heal(): void {
    if (!this.#stalled) return;
    this.#stalled = false;
    for (const pair of this.#pairs) this.#flow(pair);
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
