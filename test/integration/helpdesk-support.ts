import { expect } from 'chai';
import { FakeChatwoot } from '../helpers/fake-chatwoot.js';
import type { FakeContact, FakeConversation, FakeMessage } from '../helpers/fake-chatwoot.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectOk } from './support.js';
import { until } from '../helpers/until.js';

/** Shared set-up of the helpdesk suites (not a test file itself). */

/**
 * Short Chatwoot deadlines so that outages show within a test: one retry per operation, `error` after two
 * failed operations, queued messages tried again every 150 ms. Loopback URLs allowed (the fake).
 */
export const HELPDESK_ENV = {
  ALLOW_PRIVATE_URLS: 'true',
  HELPDESK_TIMEOUT_MS: '400',
  HELPDESK_RETRIES: '1',
  HELPDESK_ERROR_AFTER: '2',
  HELPDESK_RETRY_INTERVAL_MS: '150',
};

let numbers = 0;
/** A fresh contact number for each use (contacts are account-wide in Chatwoot). */
export const freshNumber = () =>
  `55119${String(process.pid % 1000).padStart(3, '0')}${String(++numbers).padStart(4, '0')}`;

export interface HelpdeskRig {
  net: NetworkNode;
  fake: FakeChatwoot;
  /** A linked sandbox instance with the helpdesk set (`settings` added to the set body); its token. */
  instance(name: string, settings?: Record<string, unknown>): Promise<string>;
  set(
    name: string,
    token: string,
    body: Record<string, unknown>,
    prefix?: string,
  ): ReturnType<NetworkNode['node']['api']['post']>;
  list(name: string, token: string): Promise<any>;
  /** A contact writes to the instance; the WhatsApp message id. */
  inbound(name: string, token: string, from: string, text: string, extra?: Record<string, unknown>): Promise<string>;
  /** The Chatwoot contact of a chat, once it exists. */
  contact(jid: string): Promise<FakeContact>;
  /** The contact's conversations, once there are `count`. */
  conversations(contact: FakeContact, count?: number): Promise<FakeConversation[]>;
  /** The conversation's messages once `count` are there. */
  messages(conversationId: number, count: number): Promise<FakeMessage[]>;
  stop(): Promise<void>;
}

export async function startHelpdeskRig(env: Record<string, string> = {}): Promise<HelpdeskRig> {
  const fake = await FakeChatwoot.start();
  const net = await startNetworkNode({ ...HELPDESK_ENV, ...env });
  const api = net.node.api;
  const rig: HelpdeskRig = {
    net,
    fake,
    set: (name, token, body, prefix = '/api/helpdesk') => api.post(`${prefix}/set/${name}`, body, { token }),
    async instance(name, settings = {}) {
      const token = await net.linked(name, freshNumber());
      const res = await rig.set(name, token, {
        baseUrl: fake.url,
        accountId: fake.accountId,
        apiToken: fake.token,
        inboxName: `inbox ${name}`,
        ...settings,
      });
      expectOk(res);
      return token;
    },
    async list(name, token) {
      const res = await api.get(`/api/helpdesk/list/${name}`, { token });
      expectOk(res);
      return res.body.helpdesk;
    },
    async inbound(name, token, from, text, extra = {}) {
      const res = await api.post(`/api/sandbox/inbound/${name}`, { from, text, ...extra }, { token });
      expectOk(res);
      return res.body.messageId as string;
    },
    contact: (jid) => until(() => fake.contactByIdentifier(jid), `a Chatwoot contact for ${jid}`, 8000),
    conversations: (contact, count = 1) =>
      until(
        () => {
          const list = fake.conversationsOf(contact.id);
          return list.length >= count ? list : undefined;
        },
        `${count} conversation(s) of contact ${contact.id}`,
        8000,
      ),
    messages: (conversationId, count) =>
      until(
        () => {
          const list = fake.messagesOf(conversationId);
          return list.length >= count ? list : undefined;
        },
        `${count} message(s) in conversation ${conversationId}`,
        8000,
      ),
    async stop() {
      await net.stop();
      await fake.stop();
    },
  };
  return rig;
}

/** The instance's WhatsApp messages to `jid` in the sandbox outbox. */
export async function sentTo(rig: HelpdeskRig, name: string, token: string, jid: string): Promise<any[]> {
  return rig.net.outbox(name, token, jid);
}

export function expectOnce<T>(list: T[], match: (t: T) => boolean, what: string): T {
  const found = list.filter(match);
  expect(found, what).to.have.length(1);
  return found[0]!;
}
