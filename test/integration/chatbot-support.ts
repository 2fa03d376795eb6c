import { expect } from 'chai';
import { FakeTypebot } from '../helpers/fake-typebot.js';
import { expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { until } from '../helpers/until.js';

/** Shared set-up of the chatbot suites (not a test file itself): a sandbox node and a fake Typebot. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const jid = (number: string) => `${number}@s.whatsapp.net`;

export interface ChatbotInstance {
  name: string;
  token: string;
  /** POST /api/sandbox/inbound: a contact writes to the instance. */
  say(from: string, text: string, extra?: Record<string, unknown>): Promise<void>;
  /** What the instance sent to a chat, presence updates left out unless asked. */
  sent(to: string, options?: { presence?: boolean }): Promise<any[]>;
  /** Waits until the instance has sent at least `count` messages to the chat; returns them. */
  waitSent(to: string, count: number, what?: string): Promise<any[]>;
  /** POST /api/chatbot/set; returns the bot. */
  bot(body: Record<string, unknown>): Promise<any>;
  sessions(query?: string): Promise<any[]>;
  session(number: string): Promise<any>;
  control(number: string, action: string): Promise<any>;
}

export interface ChatbotHarness {
  net: NetworkNode;
  typebot: FakeTypebot;
  instance(name: string, number: string): Promise<ChatbotInstance>;
  stop(): Promise<void>;
}

export async function startChatbotHarness(env: Record<string, string> = {}): Promise<ChatbotHarness> {
  const typebot = await FakeTypebot.start();
  const net = await startNetworkNode({ ALLOW_PRIVATE_URLS: 'true', ...env });
  const api = net.node.api;
  return {
    net,
    typebot,
    async instance(name, number) {
      const token = await net.linked(name, number);
      const sent = async (to: string, options: { presence?: boolean } = {}) =>
        (await net.outbox(name, token, to)).filter((m) => options.presence || m.type !== 'presence');
      return {
        name,
        token,
        async say(from, text, extra = {}) {
          expectOk(await api.post(`/api/sandbox/inbound/${name}`, { from, text, ...extra }, { token }));
        },
        sent,
        waitSent: (to, count, what = `${count} messages to ${to}`) =>
          until(
            async () => {
              const list = await sent(to);
              return list.length >= count ? list : undefined;
            },
            what,
            10000,
          ),
        async bot(body) {
          const res = await api.post(`/api/chatbot/set/${name}`, body, { token });
          expect(res.status, res.text).to.equal(201);
          return res.body.bot;
        },
        async sessions(query = '') {
          const res = await api.get(`/api/chatbot/sessions/${name}${query}`, { token });
          expectOk(res);
          return res.body.sessions as any[];
        },
        async session(number) {
          const res = await api.get(`/api/chatbot/sessions/${name}`, { token });
          return res.status === 200 ? (res.body.sessions as any[]).find((s) => s.number === number) : undefined;
        },
        async control(number, action) {
          const res = await api.post(`/api/chatbot/sessions/${name}`, { number, action }, { token });
          expectOk(res);
          return res.body.session;
        },
      };
    },
    async stop() {
      await net.stop();
      await typebot.close();
    },
  };
}
