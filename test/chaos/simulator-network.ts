import type { ApiClient } from '../helpers/test-node.js';
import { startTestSimulator } from '../helpers/simulator.js';
import type { TestSimulator } from '../helpers/simulator.js';
import { CALL_RINGING_MS as RINGING_MS } from '../../simulator/index.js';
import type { Simulator, StanzaEvent } from '../../simulator/index.js';
import { scanQr } from '../../simulator/phone/phone-linking.js';
import type { Phone } from '../../simulator/phone/phone.js';
import { addTo, emptyObservation } from './chaos-network.js';
import type { ChaosNetwork, InboundResult, NetworkFault, NetworkObservation } from './chaos-network.js';
import type { EpochWatch } from './epoch-watch.js';
import type { History } from './history.js';
import { TcpProxy } from './tcp-proxy.js';
import { request } from './workload.js';
import type { ChaosInstance } from './workload.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Kinds of stanza a companion sends that are side effects at the network (what a stale owner must not do). */
const SIDE_EFFECTS = new Set(['message', 'receipt', 'presence', 'chatstate', 'call']);

/**
 * WhatsApp played by the simulator, for `--driver baileys`: the nodes run the Baileys driver against
 * it (each through its own TCP proxy, so that the nemesis can cut one node from WhatsApp alone), the
 * instances' phones link them by QR, contacts are phones that write, call and read. The checkers read the
 * simulator (its stanza log, its devices) and the phones (what each decrypted, from which connection).
 */
export class SimulatorNetwork implements ChaosNetwork {
  readonly driver = 'baileys' as const;
  readonly #proxies = new Map<string, TcpProxy>();
  readonly #contacts: Phone[] = [];
  /** Instance phone number → instance name. */
  readonly #byNumber = new Map<string, string>();
  epochs: EpochWatch | undefined;
  readonly faults: NetworkFault[];

  private constructor(readonly sim: TestSimulator) {
    const server = () => this.simulator.server;
    const companion = (instance: ChaosInstance) =>
      this.simulator.core.directory
        .byNumber(instance.number)
        ?.linkedDevices()
        .find((d) => d.id !== 0);
    this.faults = [
      {
        name: 'wa-replaced',
        inject: async ({ instance }) => {
          const device = companion(instance);
          if (device) server().inject('replaced', device);
        },
      },
      {
        name: 'wa-restart',
        inject: async ({ random }) => {
          const downMs = random.int(0, 1500);
          server().inject('restart', undefined, { downMs });
          await sleep(downMs);
        },
      },
      {
        name: 'wa-login-limit',
        // A restart under a login limit: the reconnecting sessions meet 429s and must back off.
        inject: async () => {
          server().limiter.set(2);
          server().inject('restart', undefined, { downMs: 0 });
          await sleep(3000);
          server().limiter.set(0);
        },
      },
      {
        name: 'wa-duplicate',
        inject: async ({ instance }) => {
          const device = companion(instance);
          if (device) server().inject('duplicate', device, { count: 3 });
        },
      },
      {
        name: 'wa-lost',
        inject: async ({ instance }) => {
          const device = companion(instance);
          if (device) server().inject('lost', device);
        },
      },
      {
        name: 'wa-cut-node',
        // One node loses WhatsApp but keeps Redis: its sessions reconnect when it heals.
        inject: async ({ node, random }) => {
          const proxy = this.#proxies.get(node.id);
          if (!proxy) return;
          proxy.stall();
          if (random.int(0, 1) === 0) proxy.cut();
          await sleep(random.int(1000, 4000));
          proxy.heal();
        },
      },
    ];
  }

  static async start(): Promise<SimulatorNetwork> {
    const network = new SimulatorNetwork(await startTestSimulator());
    for (let i = 0; i < 5; i++) network.#contacts.push(network.simulator.addPhone(network.contact(i), `Contact ${i}`));
    return network;
  }

  get simulator(): Simulator {
    return this.sim.simulator;
  }

  contact(i: number): string {
    return `55990000${String(1000 + i)}`;
  }

  async nodeEnv(nodeId: string): Promise<Record<string, string>> {
    let proxy = this.#proxies.get(nodeId);
    if (!proxy) {
      const port = Number(new URL(this.sim.nodeEnv.WHATSAPP_WS_URL).port);
      proxy = await TcpProxy.start(port);
      this.#proxies.set(nodeId, proxy);
    }
    return { ...this.sim.nodeEnv, WHATSAPP_WS_URL: `ws://127.0.0.1:${proxy.port}/ws/chat` };
  }

  async prepare(instance: ChaosInstance): Promise<void> {
    if (!this.simulator.phone(instance.number)) this.simulator.addPhone(instance.number, instance.name);
    this.#byNumber.set(instance.number, instance.name);
  }

  /** Connects and has the instance's phone scan the QR; again while the QR dies with a handoff. */
  async link(api: ApiClient, instance: ChaosInstance): Promise<void> {
    const phone = this.simulator.phone(instance.number)!;
    for (let attempt = 1; ; attempt++) {
      // A reused keep-alive socket the node just closed resets the request: a client asks again.
      const connect = await api
        .get(`/api/instance/connect/${instance.name}`, { token: instance.token })
        .catch((err: unknown) => ({ status: 0, body: { error: String(err) } }));
      if (connect.body?.status === 'connected') return;
      if (connect.body?.status === 'qr') {
        try {
          scanQr(phone, this.simulator.server, connect.body.qrCode as string);
          if (await this.#loggedIn(instance, 15_000)) return;
        } catch {
          // The QR's connection closed before the scan (the instance moved): connect again.
        }
      }
      if (attempt >= 10) throw new Error(`link ${instance.name}: ${JSON.stringify(connect.body)}`);
      await sleep(500);
    }
  }

  async #loggedIn(instance: ChaosInstance, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const device = this.simulator.core.directory
        .byNumber(instance.number)
        ?.linkedDevices()
        .find((d) => d.id !== 0);
      if (device?.endpoint) return true;
      await sleep(50);
    }
    return false;
  }

  async inbound(instance: ChaosInstance, contact: number, text: string): Promise<InboundResult> {
    try {
      const id = await this.#contacts[contact]!.sendContent(`${instance.number}@s.whatsapp.net`, { text });
      return { outcome: 'ok', id };
    } catch (err) {
      return { outcome: 'refused', detail: (err as Error).message };
    }
  }

  async call(instance: ChaosInstance, contact: number): Promise<InboundResult> {
    return { outcome: 'ok', id: this.#contacts[contact]!.call(`${instance.number}@s.whatsapp.net`) };
  }

  /** Every instance's companion connected again, and answering through the API. */
  async available(instance: ChaosInstance, api: ApiClient): Promise<boolean> {
    const device = this.simulator.core.directory
      .byNumber(instance.number)
      ?.linkedDevices()
      .find((d) => d.id !== 0);
    if (!device?.endpoint) return false;
    const res = await request(api.baseUrl, 'GET', '/api/instance/list', instance.token);
    return res?.body?.instances?.[0]?.connection?.state === 'connected';
  }

  record(): string {
    return this.simulator.core.log
      .after(0, Number.MAX_SAFE_INTEGER)
      .map((e) => JSON.stringify(e))
      .join('\n');
  }

  async observe(instances: ChaosInstance[], bot: ChaosInstance, history: History): Promise<NetworkObservation> {
    const o = emptyObservation();
    const core = this.simulator.core;
    await Promise.all([...core.phones.values()].map((p) => (p as Phone).settled()));
    const nameOf = (jid: string) => this.#byNumber.get(jid.split('@')[0]!.split(':')[0]!);
    // When each question's receipt went and its answer reached the contact: how long the bot took.
    const answeredAt = new Map<string, number>();
    const askedAt = new Map<string, number>();
    // What the contacts decrypted from each instance: the network's own record of the sends.
    for (const contact of this.#contacts) {
      for (const r of contact.received) {
        const name = nameOf(r.from);
        if (!name || r.fromMe) continue;
        const text = r.caption ?? r.text ?? '';
        if (name === bot.name) {
          // One id relayed twice is one reply (the network's repeat, or a resend under the recorded id).
          if (text.startsWith('echo ') && !r.duplicate) {
            o.botReplies.push(text);
            const question = text.slice('echo '.length);
            if (!answeredAt.has(question)) answeredAt.set(question, r.t);
          }
          continue;
        }
        let sent = o.sent.get(name);
        if (!sent) o.sent.set(name, (sent = new Map()));
        addTo(sent, text, r.id);
      }
      for (const c of contact.calls) {
        const name = nameOf(c.from);
        if (name && c.action === 'reject' && c.callId) {
          const list = o.rejections.get(name) ?? [];
          list.push(c.callId);
          o.rejections.set(name, list);
        }
      }
      const decrypted = new Set(contact.received.map((r) => r.id));
      for (const f of contact.failures) {
        if (decrypted.has(f.id)) o.recoveredDecryptFailures++;
        else o.decryptFailures.push(`${contact.account.number} could not decrypt ${f.id} from ${f.from}: ${f.error}`);
      }
    }
    for (const p of core.phones.values()) {
      const phone = p as Phone;
      if (this.#byNumber.has(phone.account.number)) {
        const decrypted = new Set(phone.received.map((r) => r.id));
        for (const f of phone.failures) {
          if (decrypted.has(f.id)) o.recoveredDecryptFailures++;
          else o.decryptFailures.push(`${phone.account.number} could not decrypt ${f.id} from ${f.from}: ${f.error}`);
        }
      }
    }
    const events = core.log.after(0, Number.MAX_SAFE_INTEGER);
    // Inbound messages: handed over once the instance's companion sent its receipt (WhatsApp then forgets them).
    const inboundById = new Map<string, { instance: string; text: string; question?: true }>();
    for (const op of history.of('inbound')) {
      if (op.outcome === 'ok' && op.detail) {
        inboundById.set(op.detail, { instance: op.fields.instance as string, text: op.fields.text as string });
      }
    }
    for (const op of history.of('chat')) {
      if (op.outcome === 'ok' && op.detail) {
        inboundById.set(op.detail, { instance: bot.name, text: op.fields.text as string, question: true });
      }
    }
    const callByStanza = new Map<string, string>();
    const offeredAt = new Map<string, number>();
    for (const e of events) {
      if (e.kind === 'call' && e.action === 'offer' && e.id && e.callId) {
        callByStanza.set(e.id, e.callId as string);
        if (!offeredAt.has(e.callId as string)) offeredAt.set(e.callId as string, e.t);
      }
    }
    let rangOut = 0;
    o.callTimelines = callTimelines(events, callByStanza);
    let retries = 0;
    // A companion's retry receipt is repaired when the same device later sends a plain receipt for that id.
    const retried = new Map<string, string>();
    for (const e of events) {
      if (!e.device || e.device.split('@')[0]!.indexOf(':') < 0) continue; // companions only
      const name = nameOf(e.device);
      if (!name) continue;
      if (e.kind === 'receipt' && e.type === 'retry') {
        retries++;
        retried.set(
          `${e.device}/${e.id}`,
          `${name}'s companion could not decrypt ${e.id} (retry receipt to ${String(e.to)})`,
        );
      }
      if (e.kind === 'receipt' && e.type !== 'retry') {
        for (const id of (e.ids as string[] | undefined) ?? [e.id]) {
          if (retried.delete(`${e.device}/${id}`)) o.recoveredDecryptFailures++;
          const inbound = id ? inboundById.get(id) : undefined;
          if (inbound?.question) {
            o.questions.add(inbound.text);
            if (!askedAt.has(inbound.text)) askedAt.set(inbound.text, e.t);
          } else if (inbound) addTo(o.delivered, inbound.instance, inbound.text);
        }
      }
      if (e.kind === 'ack' && e.class === 'call' && e.id) {
        const callId = callByStanza.get(e.id);
        // An offer the network held until the call had rung out is a missed call: nothing can reject it.
        if (callId && e.t - (offeredAt.get(callId) ?? e.t) < RINGING_MS) addTo(o.acknowledgedCalls, name, callId);
        else if (callId) rangOut++;
      }
    }
    for (const [key, line] of retried) o.companionRetries.push({ id: key.slice(key.indexOf('/') + 1), line });
    o.staleSideEffects = this.#stale(events, instances);
    const waits = [...askedAt].flatMap(([q, t]) => (answeredAt.has(q) ? [answeredAt.get(q)! - t] : []));
    if (waits.length > 0) {
      waits.sort((a, b) => a - b);
      o.notes.push(
        `chatbot answers after the question's receipt: p50 ${waits[Math.floor(waits.length / 2)]} ms, slowest ${waits.at(-1)} ms`,
      );
    }
    o.notes.push(
      `simulator: ${events.filter((e) => e.kind === 'login').length} logins, ` +
        `${events.filter((e) => e.kind === 'replaced').length} replacements, ` +
        `${events.filter((e) => e.kind === 'login-refused').length} logins refused, ` +
        `${retries} retry receipts, ${o.recoveredDecryptFailures} decryption failures repaired by a retry, ` +
        `${rangOut} call offers acknowledged only after they had rung out (missed calls), ` +
        `${core.log.lastSeq} stanza events`,
    );
    return o;
  }

  /**
   * Side effects (messages, receipts, presences, chat states, calls) a companion sent on a connection
   * whose owner's epoch the store had already superseded when the stanza arrived. A connection names its
   * node and epoch when it opens; one that names no epoch is itself reported (the check would be blind).
   */
  #stale(events: StanzaEvent[], instances: ChaosInstance[]): string[] {
    const found: string[] = [];
    const epochs = this.epochs;
    if (!epochs) return ['no epoch watch: stale side effects cannot be checked'];
    const idOf = new Map(instances.map((i) => [i.number, i.id]));
    const connections = new Map<string, { epoch: number | undefined; node: string | undefined }>();
    for (const e of events) {
      if (e.kind === 'connect' && e.connection) {
        connections.set(e.connection, { epoch: typeof e.epoch === 'number' ? e.epoch : undefined, node: e.node });
      }
    }
    const unlabelled = new Set<string>();
    for (const e of events) {
      if (!SIDE_EFFECTS.has(e.kind) || !e.device || !e.connection?.startsWith('c')) continue;
      const number = e.device.split('@')[0]!.split(':')[0]!;
      const instanceId = idOf.get(number);
      if (!instanceId || !e.device.includes(':')) continue;
      const conn = connections.get(e.connection);
      if (conn?.epoch === undefined) {
        unlabelled.add(e.connection);
        continue;
      }
      const newer = epochs.supersededAt(instanceId, conn.epoch, e.t);
      if (newer) {
        found.push(
          `${this.#byNumber.get(number)}: ${e.kind} ${e.id ?? ''} from ${String(conn.node)} under epoch ${conn.epoch}, ` +
            `${e.t - newer.seenAt} ms after epoch ${newer.epoch} existed`,
        );
      }
    }
    for (const c of unlabelled) found.push(`connection ${c} named no owner epoch: its side effects cannot be checked`);
    return found;
  }

  async close(): Promise<void> {
    this.epochs?.close();
    for (const proxy of this.#proxies.values()) await proxy.close();
    await this.sim.close();
  }
}

/**
 * What the network saw of each call, in seconds after its offer: each delivery of the offer to a companion,
 * each ack of it, each rejection a companion sent (`ignored` when the call was over by then).
 */
export function callTimelines(events: StanzaEvent[], callByStanza: Map<string, string>): Map<string, string> {
  const offeredAt = new Map<string, number>();
  const lines = new Map<string, string[]>();
  for (const e of events) {
    const callId = e.kind === 'call' ? (e.callId as string | undefined) : e.id ? callByStanza.get(e.id) : undefined;
    if (!callId) continue;
    if (e.kind === 'call' && e.action === 'offer') {
      if (!offeredAt.has(callId)) offeredAt.set(callId, e.t);
      continue;
    }
    if (!e.device?.includes(':') || e.connection?.startsWith('phone')) continue;
    const at = `+${((e.t - (offeredAt.get(callId) ?? e.t)) / 1000).toFixed(2)} s`;
    const where = `${e.connection ?? '?'}${e.node ? `/${String(e.node)}` : ''}`;
    let line: string | undefined;
    if (e.kind === 'deliver' && e.tag === 'call') {
      line = `offer delivered to ${where} ${at}${e.offline ? ' (offline)' : ''}`;
    } else if (e.kind === 'ack' && e.class === 'call') {
      line = `acked by ${where} ${at}`;
    } else if (e.kind === 'call' && e.action === 'reject') {
      line = `rejected by ${where} ${at}${e.ignored ? ' (ignored: the call was over)' : ''}`;
    }
    if (!line) continue;
    const list = lines.get(callId) ?? [];
    list.push(line);
    lines.set(callId, list);
  }
  return new Map([...lines].map(([id, list]) => [id, list.join('; ')]));
}
