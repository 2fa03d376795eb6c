import { pngImage } from '../helpers/media-fixtures.js';
import type { ChaosCluster } from './chaos-cluster.js';
import type { ChaosNetwork, InboundResult } from './chaos-network.js';
import type { History, Operation } from './history.js';
import type { Random } from './random.js';

/** An answer, or `undefined` when none came in time (connection refused, reset, or the deadline). */
export interface Answer {
  status: number;
  body: any;
}

const CLIENT_TIMEOUT_MS = 6000;

/** One HTTP request as a client sends it, bounded in time. */
export async function request(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer | undefined> {
  try {
    const res = await fetch(url + path, {
      method,
      headers: { token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  } catch {
    return undefined;
  }
}

export interface ChaosInstance {
  name: string;
  id: string;
  token: string;
  /** The number the instance is linked to (its phone on the simulator, or a sandbox number). */
  number: string;
}

let png: Promise<string> | undefined;
/** The image the media sends carry (a small PNG, made once). */
const image = () => (png ??= pngImage(16, 16).then((b) => b.toString('base64')));

/** How many contacts write to the instances and receive their sends. */
const CONTACTS = 5;

/**
 * The clients: sends with an Idempotency-Key (retried after a timeout or a 5xx with the same key through
 * another node, as a client would), contacts of the network writing to and calling the instances, and
 * settings writes (one writer per instance, so that the last acknowledged value is the expected one).
 */
export class Workload {
  #seq = 0;
  #stopped = false;
  readonly #settingsBusy = new Set<string>();
  readonly #webhookBusy = new Set<string>();
  /** Where each configuration of the `cfg` webhooks points: the receiver, one path per change. */
  receiverUrl = '';

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly network: ChaosNetwork,
    private readonly instances: ChaosInstance[],
    private readonly random: Random,
    private readonly history: History,
    /** The instance whose bot answers `chat` operations. */
    private readonly bot?: ChaosInstance,
  ) {}

  /** A node to send through: any running one, also one that is paused or cut off (clients cannot tell). */
  #via(): string {
    return this.#node().url;
  }

  #node() {
    return this.random.pick(this.cluster.running).process!;
  }

  /** Records what the network answered to a contact's message or call. */
  #settle(op: Operation, result: InboundResult): void {
    if (result.outcome === 'ok') this.history.ok(op, result.id);
    else if (result.outcome === 'refused') this.history.fail(op, result.detail);
    else this.history.info(op, result.detail);
  }

  stop(): void {
    this.#stopped = true;
  }

  /** Runs `workers` clients until stop(). */
  async run(workers: number, process: string): Promise<void> {
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        while (!this.#stopped) {
          const roll = this.random.next();
          if (roll < 0.3) await this.send(`${process}-${w}`);
          else if (roll < 0.4) await this.send(`${process}-${w}`, true);
          else if (roll < 0.67) await this.inbound(`${process}-${w}`);
          else if (roll < 0.72) await this.chat(`${process}-${w}`);
          else if (roll < 0.77) await this.call(`${process}-${w}`);
          else if (roll < 0.85) await this.webhook(`${process}-${w}`);
          else await this.settings(`${process}-${w}`);
          await new Promise((r) => setTimeout(r, this.random.int(20, 120)));
        }
      }),
    );
  }

  /** A text, or a small image whose caption is the key: either must reach the network exactly once. */
  async send(process: string, media = false): Promise<void> {
    const instance = this.random.pick(this.instances);
    const key = `send-${++this.#seq}`;
    const op = this.history.invoke(process, 'send', { instance: instance.name, key, media });
    const number = this.network.contact(this.random.int(0, CONTACTS - 1));
    const body = media ? { number, type: 'image', base64: await image(), caption: key } : { number, text: key };
    const path = `/api/message/${media ? 'media' : 'text'}/${instance.name}`;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const res = await request(this.#via(), 'POST', path, instance.token, body, {
        'idempotency-key': key,
      });
      if (res && res.status === 200) return this.history.ok(op, `attempt ${attempt}`);
      // A 409 is the first attempt still running, or cut off: its outcome is unknown to this client.
      if (res && res.status < 500 && res.status !== 409) return this.history.fail(op, `${res.status}`);
      await new Promise((r) => setTimeout(r, 300 * attempt));
    }
    this.history.info(op, 'no answer after 4 attempts');
  }

  async inbound(process: string): Promise<void> {
    const instance = this.random.pick(this.instances);
    const text = `inbound-${++this.#seq}`;
    const op = this.history.invoke(process, 'inbound', { instance: instance.name, text });
    this.#settle(op, await this.network.inbound(instance, this.random.int(0, CONTACTS - 1), text, this.#node().api));
  }

  /** A contact asks the bot something (a unique text); the echo flow answers it. */
  async chat(process: string): Promise<void> {
    if (!this.bot) return;
    const text = `question-${++this.#seq}`;
    const op = this.history.invoke(process, 'chat', { instance: this.bot.name, text });
    this.#settle(op, await this.network.inbound(this.bot, this.random.int(0, CONTACTS - 1), text, this.#node().api));
  }

  /** A contact calls an instance, which rejects it (autoRejectCalls); the call id is the op's detail. */
  async call(process: string): Promise<void> {
    const instance = this.random.pick(this.instances);
    const op = this.history.invoke(process, 'call', { instance: instance.name });
    this.#settle(op, await this.network.call(instance, this.random.int(0, CONTACTS - 1), this.#node().api));
  }

  /**
   * Changes an instance's `cfg` webhook (one writer per instance): re-points it at a new path, narrows its
   * filter to another event, or deletes it. `target` is where `message.exchange` goes from then on.
   */
  async webhook(process: string): Promise<void> {
    const free = this.instances.filter((i) => !this.#webhookBusy.has(i.name));
    if (free.length === 0 || !this.receiverUrl) return;
    const instance = this.random.pick(free);
    this.#webhookBusy.add(instance.name);
    const seq = ++this.#seq;
    const roll = this.random.next();
    const action = roll < 0.7 ? 'repoint' : roll < 0.85 ? 'filter' : 'delete';
    const target = action === 'repoint' ? `/cfg-${seq}` : null;
    const op = this.history.invoke(process, 'webhook', { instance: instance.name, action, target });
    try {
      const path = `/api/events/webhook/${instance.name}`;
      const res =
        action === 'delete'
          ? await request(this.#via(), 'DELETE', `${path}?label=cfg`, instance.token)
          : await request(this.#via(), 'POST', path, instance.token, {
              label: 'cfg',
              enabled: true,
              url: `${this.receiverUrl}/cfg-${seq}`,
              events: action === 'repoint' ? ['message.exchange'] : ['instance.state'],
            });
      // Deleting a webhook that is not there leaves the same state: no `cfg` webhook.
      if (res && (res.status === 200 || res.status === 201 || (action === 'delete' && res.status === 404))) {
        this.history.ok(op);
      } else if (res && res.status < 500 && res.status !== 409) this.history.fail(op, `${res.status}`);
      else this.history.info(op, res ? `${res.status}` : 'no answer');
    } finally {
      this.#webhookBusy.delete(instance.name);
    }
  }

  async settings(process: string): Promise<void> {
    const free = this.instances.filter((i) => !this.#settingsBusy.has(i.name));
    if (free.length === 0) return;
    const instance = this.random.pick(free);
    this.#settingsBusy.add(instance.name);
    const value = `settings-${++this.#seq}`;
    const op = this.history.invoke(process, 'settings', { instance: instance.name, value });
    try {
      const res = await request(this.#via(), 'POST', `/api/instance/settings/${instance.name}`, instance.token, {
        callRejectMessage: value,
      });
      if (res?.status === 200) this.history.ok(op);
      else if (res && res.status < 500) this.history.fail(op, `${res.status}`);
      else this.history.info(op, res ? `${res.status}` : 'no answer');
    } finally {
      this.#settingsBusy.delete(instance.name);
    }
  }
}

export type { Operation };
