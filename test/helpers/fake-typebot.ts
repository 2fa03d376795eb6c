import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Typebot viewer following the real chat API (engine v2), for tests:
 * - `POST /api/v1/typebots/{publicId}/startChat` → `{sessionId, resultId, typebot, messages, input?, clientSideActions?}`;
 * - `POST /api/v1/sessions/{sessionId}/continueChat` `{message?}` → `{messages, input?, clientSideActions?}`;
 * - a choice reply matches an item by id, value, content or `metadata.replyId`, else the retry bubble
 *   `Invalid message. Please, try again.` with the same input;
 * - when a step has no input and no wait expecting a dedicated reply, the flow is over and the session is
 *   deleted: a later continueChat answers 404 `Session not found.`;
 * - an unknown public id answers 404 `Typebot not found`; a broken one 500.
 * Flows are scripted as steps; a step's bubbles may depend on the answers so far.
 */

export interface FlowContext {
  answers: string[];
  variables: Record<string, unknown>;
}

export interface FakeMessage {
  id?: string;
  type: string;
  content: unknown;
}

export interface FakeInput {
  id: string;
  type: string;
  items?: { id: string; content?: string; value?: string }[];
  options?: Record<string, unknown>;
}

export interface FakeAction {
  type: 'wait';
  wait: { secondsToWaitFor: number };
  lastBubbleBlockId?: string;
  expectsDedicatedReply?: boolean;
}

export interface FlowStepScript {
  messages: FakeMessage[] | ((ctx: FlowContext) => FakeMessage[]);
  input?: FakeInput;
  actions?: FakeAction[];
}

let bubbleSeq = 0;

/** A rich-text bubble (one paragraph per line). */
export function text(value: string, id = `b${++bubbleSeq}`): FakeMessage {
  return {
    id,
    type: 'text',
    content: {
      type: 'richText',
      richText: value.split('\n').map((line) => ({ type: 'p', children: [{ text: line }] })),
    },
  };
}

/** A rich-text bubble built from Plate nodes. */
export function richText(nodes: unknown[], id = `b${++bubbleSeq}`): FakeMessage {
  return { id, type: 'text', content: { type: 'richText', richText: nodes } };
}

export function image(url: string, id = `b${++bubbleSeq}`): FakeMessage {
  return { id, type: 'image', content: { url } };
}

export function choice(items: { id: string; content: string }[], id = `in${++bubbleSeq}`): FakeInput {
  return {
    id,
    type: 'choice input',
    items: items.map((i) => ({ ...i, outgoingEdgeId: `e-${i.id}` })),
    options: { isMultipleChoice: false, buttonLabel: 'Send' },
  };
}

export function textInput(id = `in${++bubbleSeq}`): FakeInput {
  return { id, type: 'text input', options: { labels: { placeholder: 'Type your answer...' } } };
}

export function wait(seconds: number, options: { after?: string; dedicated?: boolean } = {}): FakeAction {
  return {
    type: 'wait',
    wait: { secondsToWaitFor: seconds },
    ...(options.after ? { lastBubbleBlockId: options.after } : {}),
    ...(options.dedicated ? { expectsDedicatedReply: true } : {}),
  };
}

export interface RecordedCall {
  kind: 'start' | 'continue';
  publicId?: string;
  sessionId: string | undefined;
  body: Record<string, unknown>;
}

interface Session {
  publicId: string;
  step: number;
  answers: string[];
  variables: Record<string, unknown>;
}

const RETRY = 'Invalid message. Please, try again.';

export class FakeTypebot {
  readonly flows = new Map<string, FlowStepScript[]>();
  readonly sessions = new Map<string, Session>();
  readonly calls: RecordedCall[] = [];
  readonly media = new Map<string, { body: Buffer; type: string }>();
  /** Public ids that answer 500. */
  readonly broken = new Set<string>();
  #seq = 0;
  readonly #publicIdOf = new Map<string, string>();

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeTypebot> {
    const holder: { fake?: FakeTypebot } = {};
    const server = createServer((req, res) => void holder.fake!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.fake = new FakeTypebot(server, `http://127.0.0.1:${port}`);
    return holder.fake;
  }

  /** Registers a flow; returns its viewer URL (what a bot's `url` is). */
  flow(publicId: string, steps: FlowStepScript[]): string {
    this.flows.set(publicId, steps);
    return `${this.url}/${publicId}`;
  }

  serve(path: string, body: Buffer, type: string): string {
    this.media.set(path, { body, type });
    return `${this.url}${path}`;
  }

  /** Typebot loses the session (a later continueChat gets 404). */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** The sessions started for a chat (by the `remoteJid` variable), oldest first. */
  startsFor(remoteJid: string): RecordedCall[] {
    return this.calls.filter(
      (c) =>
        c.kind === 'start' &&
        (c.body.prefilledVariables as Record<string, unknown> | undefined)?.remoteJid === remoteJid,
    );
  }

  /** The calls made for one flow or session. */
  callsOf(filter: { publicId?: string; sessionId?: string; kind?: 'start' | 'continue' }): RecordedCall[] {
    return this.calls.filter(
      (c) =>
        (filter.kind === undefined || c.kind === filter.kind) &&
        (filter.sessionId === undefined || c.sessionId === filter.sessionId) &&
        (filter.publicId === undefined ||
          c.publicId === filter.publicId ||
          (c.sessionId !== undefined && this.#publicIdOf.get(c.sessionId) === filter.publicId)),
    );
  }

  /** The texts the flow received, in order (what continueChat carried). */
  received(publicId: string): string[] {
    return this.callsOf({ publicId, kind: 'continue' })
      .map((c) => c.body.message)
      .filter((m) => m !== undefined)
      .map((m) => (typeof m === 'string' ? m : String((m as { text: string }).text)));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET') {
      const file = this.media.get(path);
      if (!file) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = (chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {}) as Record<string, unknown>;
    const send = (status: number, json: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    const start = /^\/api\/v1\/typebots\/([^/]+)\/startChat$/.exec(path);
    const cont = /^\/api\/v1\/sessions\/([^/]+)\/continueChat$/.exec(path);
    if (req.method !== 'POST' || (!start && !cont)) {
      return void send(404, { code: 'NOT_FOUND', message: 'Not found', status: 404 });
    }

    if (start) {
      const publicId = decodeURIComponent(start[1]!);
      const call: RecordedCall = { kind: 'start', publicId, sessionId: undefined, body };
      this.calls.push(call);
      if (this.broken.has(publicId)) {
        return void send(500, { code: 'INTERNAL_SERVER_ERROR', message: 'Something went wrong', status: 500 });
      }
      const steps = this.flows.get(publicId);
      if (!steps) return void send(404, { code: 'NOT_FOUND', message: 'Typebot not found', status: 404 });
      const sessionId = `sess-${++this.#seq}`;
      call.sessionId = sessionId;
      this.#publicIdOf.set(sessionId, publicId);
      const session: Session = {
        publicId,
        step: 0,
        answers: [],
        variables: (body.prefilledVariables ?? {}) as Record<string, unknown>,
      };
      this.sessions.set(sessionId, session);
      const reply = this.#render(sessionId, session);
      return void send(200, {
        sessionId,
        resultId: `res-${this.#seq}`,
        typebot: {
          id: `tb-${publicId}`,
          version: '6',
          theme: {},
          settings: {},
          publishedAt: '2026-01-01T00:00:00.000Z',
        },
        ...reply,
      });
    }

    const sessionId = decodeURIComponent(cont![1]!);
    this.calls.push({ kind: 'continue', sessionId, body });
    const session = this.sessions.get(sessionId);
    if (!session) {
      return void send(404, { defined: false, code: 'NOT_FOUND', status: 404, message: 'Session not found.' });
    }
    if (this.broken.has(session.publicId)) {
      return void send(500, { code: 'INTERNAL_SERVER_ERROR', message: 'Something went wrong', status: 500 });
    }
    const steps = this.flows.get(session.publicId)!;
    const current = steps[session.step]!;
    const message = body.message as string | { text: string; metadata?: { replyId?: string } } | undefined;
    if (current.input) {
      if (message === undefined) return void send(200, { messages: [], input: current.input });
      const typed = (typeof message === 'string' ? message : message.text).trim();
      const replyId = typeof message === 'string' ? undefined : message.metadata?.replyId;
      if (current.input.type === 'choice input') {
        const item = current.input.items!.find(
          (i) => i.id === replyId || i.id === typed || i.value === typed || i.content === typed,
        );
        if (!item) return void send(200, { messages: [text(RETRY)], input: current.input });
        session.answers.push(item.content ?? item.id);
      } else session.answers.push(typed);
    }
    session.step += 1;
    return void send(200, this.#render(sessionId, session));
  }

  /** The current step's answer; a step that waits for nothing ends the flow (the session is deleted). */
  #render(sessionId: string, session: Session) {
    const step = this.flows.get(session.publicId)![session.step];
    if (!step) {
      this.sessions.delete(sessionId);
      return { messages: [] };
    }
    const messages =
      typeof step.messages === 'function'
        ? step.messages({ answers: session.answers, variables: session.variables })
        : step.messages;
    const dedicated = step.actions?.some((a) => a.expectsDedicatedReply) ?? false;
    if (!step.input && !dedicated) this.sessions.delete(sessionId);
    return {
      messages,
      ...(step.input ? { input: step.input } : {}),
      ...(step.actions ? { clientSideActions: step.actions } : {}),
    };
  }
}
