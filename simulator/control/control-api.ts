import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { z } from 'zod';
import { FAULT_KINDS } from '../server/faults.js';
import { closeServer, listenOn } from '../util/http-listen.js';
import { LinkError, linkByCode, scanQr } from '../phone/phone-linking.js';
import type { Phone } from '../phone/phone.js';
import type { Simulator } from '../simulator.js';
import { groupView, phoneView, deviceViews } from './views.js';
import { messageContent } from './send-body.js';
import { sendBody } from './send-body.js';

/** A client's mistake: answered 4xx with the message, never a 500. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Handler = (req: { params: Record<string, string>; query: URLSearchParams; body: unknown }) => unknown;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

const MAX_BODY = 64 * 1024 * 1024;

/**
 * The simulator's control API (HTTP, JSON): phones, linking, sends, faults, limits and what the
 * observer reads (`/devices`, `/log`, each phone's records). Tests, benches, the chaos harness and
 * operators' demos use it.
 */
export class ControlApi {
  readonly #routes: Route[] = [];
  #server: Server | undefined;

  constructor(private readonly sim: Simulator) {
    this.#declare();
  }

  #route(method: string, path: string, handler: Handler): void {
    const keys: string[] = [];
    const pattern = new RegExp('^' + path.replace(/:([a-zA-Z]+)/g, (_m, k: string) => (keys.push(k), '([^/]+)')) + '$');
    this.#routes.push({ method, pattern, keys, handler });
  }

  #phone(number: string | undefined): Phone {
    const phone = number ? this.sim.phone(number) : undefined;
    if (!phone) throw new ControlError(404, `no phone ${number ?? ''}`);
    return phone;
  }

  #declare(): void {
    const sim = this.sim;
    this.#route('GET', '/', () => ({
      simulator: 'whatsapp',
      wsUrl: sim.wsUrl,
      httpUrl: sim.httpUrl,
      mediaUrl: sim.mediaUrl,
    }));
    this.#route('GET', '/node-env', () => sim.nodeEnv);
    this.#route('POST', '/phones', ({ body }) => {
      const { number, name, book, business } = parse(
        z.object({
          number: z
            .string()
            .regex(/^\d{6,15}$/)
            .optional(),
          name: z.string().max(100).optional(),
          // A WhatsApp Business account, with its business name.
          business: z.object({ name: z.string().min(1).max(100) }).optional(),
          // What only the phone knows (contacts, groups, history), for the size of a companion's first sync.
          book: z
            .object({
              contacts: z.number().int().min(0).max(5000).optional(),
              groups: z.number().int().min(0).max(500).optional(),
              messagesPerChat: z.number().int().min(0).max(100).optional(),
            })
            .optional(),
        }),
        body ?? {},
      );
      if (number && sim.core.directory.byNumber(number)) throw new ControlError(409, `number ${number} exists`);
      const phone = sim.addPhone(number, name, book);
      // A business's push name is its business name unless another is given.
      if (business) {
        phone.account.business = { name: business.name };
        if (!name) phone.account.pushName = business.name;
      }
      return phoneView(phone);
    });
    this.#route('GET', '/phones', () => sim.core.directory.accounts().map((a) => phoneView(sim.phone(a.number)!)));
    this.#route('GET', '/phones/:number', ({ params }) => phoneView(this.#phone(params.number)));
    this.#route('POST', '/phones/:number/scan', ({ params, body }) => {
      const { qr } = parse(z.object({ qr: z.string().min(10) }), body);
      const device = linkOrThrow(() => scanQr(this.#phone(params.number), sim.server, qr));
      return { device: device.pnJid, lid: device.lidJid };
    });
    this.#route('POST', '/phones/:number/pair', async ({ params, body }) => {
      const { code } = parse(z.object({ code: z.string().min(8).max(12) }), body);
      try {
        const device = await linkByCode(this.#phone(params.number), sim.server, code);
        return { device: device.pnJid, lid: device.lidJid };
      } catch (err) {
        if (err instanceof LinkError) throw new ControlError(409, err.message);
        throw err;
      }
    });
    this.#route('POST', '/phones/:number/unlink', ({ params, body }) => {
      const phone = this.#phone(params.number);
      const { jid } = parse(z.object({ jid: z.string() }), body);
      const device = sim.core.directory.device(jid);
      if (!device || device.account !== phone.account || device.id === 0) {
        throw new ControlError(404, `no linked device ${jid}`);
      }
      return { unlinked: sim.server.unlink(device, 'logged out by the phone', true) };
    });
    this.#route('POST', '/phones/:number/send', async ({ params, body }) => {
      const phone = this.#phone(params.number);
      const req = parse(sendBody, body);
      const to = this.#chatJid(req.to);
      if (req.pollVote) return { id: await phone.vote(to, req.pollVote.pollId, req.pollVote.options) };
      const { content, quoted } = messageContent(req, phone);
      return { id: await phone.sendContent(to, content, quoted) };
    });
    this.#route('POST', '/phones/:number/call', ({ params, body }) => {
      const { to, video } = parse(z.object({ to: z.string(), video: z.boolean().optional() }), body);
      return { callId: this.#phone(params.number).call(this.#chatJid(to), video ?? false) };
    });
    this.#route('POST', '/phones/:number/read', ({ params, body }) => {
      const { ids } = parse(z.object({ ids: z.array(z.string()).min(1) }), body);
      return { read: this.#phone(params.number).read(...ids) };
    });
    this.#route('POST', '/phones/:number/presence', ({ params, body }) => {
      const { to, state } = parse(
        z.object({
          to: z.string().optional(),
          state: z.enum(['available', 'unavailable', 'composing', 'paused', 'recording']),
        }),
        body,
      );
      this.#phone(params.number).presence(to ? this.#chatJid(to) : undefined, state);
      return { sent: true };
    });
    this.#route('POST', '/phones/:number/settings', ({ params, body }) => {
      const phone = this.#phone(params.number);
      const s = parse(
        z.object({
          autoRead: z.boolean().optional(),
          name: z.string().max(100).optional(),
          groupAdd: z.enum(['all', 'contacts', 'contact_blacklist', 'none']).optional(),
        }),
        body,
      );
      if (s.autoRead !== undefined) phone.autoRead = s.autoRead;
      if (s.name) phone.account.pushName = s.name;
      if (s.groupAdd) phone.account.privacy.groupadd = s.groupAdd;
      return phoneView(phone);
    });
    this.#route('GET', '/phones/:number/received', async ({ params, query }) => {
      const phone = this.#phone(params.number);
      await phone.settled();
      const after = Number(query.get('after') ?? 0);
      return phone.received.filter((r) => r.seq > after);
    });
    this.#route('GET', '/phones/:number/failures', async ({ params }) => {
      const phone = this.#phone(params.number);
      await phone.settled();
      return phone.failures;
    });
    this.#route('GET', '/phones/:number/receipts', async ({ params }) => {
      const phone = this.#phone(params.number);
      await phone.settled();
      return phone.receipts;
    });
    this.#route('GET', '/phones/:number/calls', ({ params }) => this.#phone(params.number).calls);
    this.#route('GET', '/phones/:number/chatstates', ({ params }) => this.#phone(params.number).chatstates);
    this.#route('POST', '/groups', ({ body }) => {
      const { creator, subject, members } = parse(
        z.object({
          creator: z.string(),
          subject: z.string().min(1).max(100),
          members: z.array(z.string()).default([]),
        }),
        body,
      );
      const owner = this.#phone(creator).account;
      const accounts = members.map((m) => {
        const a = sim.core.directory.account(this.#chatJid(m));
        if (!a) throw new ControlError(404, `no account ${m}`);
        return a;
      });
      return groupView(sim.core.groups.create(subject, owner, accounts));
    });
    this.#route('GET', '/groups', () => sim.core.groups.all().map(groupView));
    this.#route('GET', '/groups/:jid', ({ params }) => {
      const group = sim.core.groups.get(params.jid);
      if (!group) throw new ControlError(404, `no group ${params.jid}`);
      return groupView(group);
    });
    this.#route('GET', '/devices', () => deviceViews(sim));
    this.#route('GET', '/log', ({ query }) => {
      const after = Number(query.get('after') ?? 0);
      const limit = Math.min(Number(query.get('limit') ?? 10_000), 50_000);
      return { last: sim.core.log.lastSeq, events: sim.core.log.after(after, limit) };
    });
    this.#route('POST', '/faults', ({ body }) => {
      const f = parse(
        z.object({
          kind: z.enum(FAULT_KINDS),
          device: z.string().optional(),
          downMs: z.number().int().min(0).max(600_000).optional(),
          count: z.number().int().min(1).max(1000).optional(),
          delayMs: z.number().int().min(0).max(60_000).optional(),
        }),
        body,
      );
      const device = f.device ? sim.core.directory.device(f.device) : undefined;
      if (f.device && !device) throw new ControlError(404, `no linked device ${f.device}`);
      return sim.server.inject(f.kind, device, {
        ...(f.downMs !== undefined ? { downMs: f.downMs } : {}),
        ...(f.count ? { count: f.count } : {}),
        ...(f.delayMs !== undefined ? { delayMs: f.delayMs } : {}),
      });
    });
    this.#route('POST', '/faults/schedule', ({ body }) => {
      const s = parse(
        z.object({
          seed: z.number().int(),
          everyMs: z.number().int().min(10),
          kinds: z.array(z.enum(FAULT_KINDS)).default([]),
        }),
        body,
      );
      sim.server.startSchedule(s);
      return { scheduled: true };
    });
    this.#route('DELETE', '/faults/schedule', () => {
      sim.server.scheduler.stop();
      return { injected: sim.server.scheduler.injected };
    });
    this.#route('POST', '/limits', ({ body }) => {
      const { loginsPerSecond } = parse(z.object({ loginsPerSecond: z.number().min(0).max(100_000) }), body);
      sim.server.limiter.set(loginsPerSecond);
      return { loginsPerSecond };
    });
    this.#route('GET', '/stats', () => ({
      loginsRefused: sim.server.limiter.refused,
      loginsPerSecond: sim.server.limiter.rate,
      faultsInjected: sim.server.scheduler.injected,
      mediaUploads: sim.media.uploads,
      mediaDownloads: sim.media.downloads,
      logEvents: sim.core.log.lastSeq,
    }));
  }

  /** A chat given as a number, a user jid or a group jid. */
  #chatJid(to: string): string {
    if (to.includes('@')) return to;
    if (/^\d{6,15}$/.test(to)) return `${to}@s.whatsapp.net`;
    throw new ControlError(400, `not a number or jid: ${to}`);
  }

  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    return listenOn(server, port, host);
  }

  close(): Promise<void> {
    return closeServer(this.#server);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://control');
    const route = this.#routes.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!route) {
      reply(404, { error: `no route ${req.method} ${url.pathname}` });
      return;
    }
    try {
      const match = route.pattern.exec(url.pathname)!;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(match[i + 1]!)]));
      const body = await readJson(req);
      reply(200, await route.handler({ params, query: url.searchParams, body }));
    } catch (err) {
      if (err instanceof ControlError) reply(err.status, { error: err.message });
      else {
        this.sim.logger.error({ err }, 'control API failure');
        reply(500, { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ControlError(
      400,
      `invalid body: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return result.data;
}

function linkOrThrow<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof LinkError) throw new ControlError(409, err.message);
    throw err;
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method === 'GET' || req.method === 'DELETE') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new ControlError(413, 'body too large');
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ControlError(400, 'invalid JSON');
  }
}
