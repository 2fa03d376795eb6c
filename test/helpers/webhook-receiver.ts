import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
  at: number;
  /** The status it was answered with; undefined while (or because) it hangs. */
  status?: number;
}

/**
 * A local webhook receiver whose answer each test decides (`respond`): a status, optional headers, or
 * `hang` to never answer.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  respond: (r: Received, index: number) => { status: number; headers?: Record<string, string> } | 'hang' = () => ({
    status: 200,
  });
  #server!: Server;
  #hung: (() => void)[] = [];

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    r.#server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const rec: Received = {
          path: req.url ?? '',
          headers: req.headers,
          raw,
          body: raw ? JSON.parse(raw) : undefined,
          at: Date.now(),
        };
        r.received.push(rec);
        const answer = r.respond(rec, r.received.length - 1);
        if (answer === 'hang') {
          r.#hung.push(() => res.destroy());
          return;
        }
        rec.status = answer.status;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Requests answered 2xx. */
  accepted(): Received[] {
    return this.received.filter((r) => r.status !== undefined && r.status >= 200 && r.status < 300);
  }

  events(name?: string): Received[] {
    return this.received.filter((r) => name === undefined || r.body?.event === name);
  }

  async stop(): Promise<void> {
    for (const h of this.#hung.splice(0)) h();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
