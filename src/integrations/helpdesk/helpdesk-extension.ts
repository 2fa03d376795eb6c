import type { ActorContext } from '../../actors/instance-actor.js';
import type { ExtensionEnv, InstanceExtension, InstanceExtensionFactory } from '../../actors/instance-extension.js';
import { untilStored } from '../../actors/until-stored.js';
import type { MediaConfig } from '../../config/config.js';
import { NotOwnerError, isOwnershipLoss, reasonOf } from '../../errors.js';
import type { MsgNetSession } from '../../msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../../msgnet/msgnet-events.js';
import type { HelpdeskConfig } from '../../store/records.js';
import { BridgeConfig } from './bridge-config.js';
import type { BridgeConfigDeps } from './bridge-config.js';
import { BridgeState } from './bridge-state.js';
import type { AgentMessage, InboundEntry, OutboundEntry } from './bridge-state.js';
import { ChatwootError } from './chatwoot-http.js';
import { deliverToWhatsapp } from './chatwoot-to-whatsapp.js';
import type { HelpdeskCallMap, HelpdeskInbound, HelpdeskPatch } from './helpdesk-calls.js';
import { SerialWorker } from './serial-worker.js';
import { forwardToChatwoot, forwardable } from './whatsapp-to-chatwoot.js';
import { BoundedSet } from '../../util/bounded-map.js';

export interface HelpdeskBridgeDeps extends BridgeConfigDeps {
  media: MediaConfig;
}

/** Messages waiting for Chatwoot beyond this are not queued (logged): an outage must not fill the store. */
const MAX_OUTBOUND = 10_000;
/** Our own recent sends to WhatsApp, whose echoes must not go back to Chatwoot. */
const OWN_SENDS_KEPT = 2_000;
/** How often the seen records are pruned. */
const PRUNE_EVERY_MS = 6 * 3600_000;

type Handlers<S> = {
  [K in keyof HelpdeskCallMap]: (
    scope: S,
    payload: HelpdeskCallMap[K]['payload'],
  ) => Promise<HelpdeskCallMap[K]['result']>;
};

const aborted = (err: unknown) => err instanceof ChatwootError && err.failure === 'aborted';

/** The WhatsApp ↔ Chatwoot bridge of every instance actor (only when HELPDESK_ENABLED). */
export function helpdeskExtension(deps: HelpdeskBridgeDeps): InstanceExtensionFactory {
  return {
    create: (instanceId) => new HelpdeskBridge(deps, instanceId),
    handlers: (self) => HelpdeskBridge.handlers((scope) => self(scope) as HelpdeskBridge),
  };
}

/**
 * One instance's bridge, on its owner node. Everything that talks to Chatwoot runs on one serial worker,
 * so each conversation's order holds; what waits for it (WhatsApp messages for Chatwoot, agent messages
 * for WhatsApp) is queued in owned state first, so a new owner resumes it after a failover. Operator
 * changes (set, delete) go first and cut short a Chatwoot request in flight. The configuration block and
 * its status are kept by `BridgeConfig`.
 */
class HelpdeskBridge implements InstanceExtension {
  #env: ExtensionEnv | undefined;
  readonly #config: BridgeConfig;
  readonly #state: BridgeState;
  #outbound: OutboundEntry[] = [];
  #inbound: InboundEntry[] = [];
  readonly #ownSends = new BoundedSet<string>(OWN_SENDS_KEPT);
  readonly #groupNames = new Map<string, string>();
  readonly #worker: SerialWorker;
  /** Cuts short the Chatwoot request of a forward in flight (an operator change preempts it). */
  #abort: AbortController | undefined;
  #retryAt = 0;
  /** onStop ran: a forward waiting for the store gives up. */
  #stopping = false;
  #retryTimer: NodeJS.Timeout | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: HelpdeskBridgeDeps,
    private readonly instanceId: string,
  ) {
    this.#state = new BridgeState(() => this.#ctx());
    this.#config = new BridgeConfig(deps, instanceId, () => this.#ctx(), this.#state);
    this.#worker = new SerialWorker({
      next: () => this.#nextJob(),
      fatal: isOwnershipLoss,
      onError: (err) => this.#log.error({ err }, 'helpdesk worker failed'),
      stoppedError: () => new NotOwnerError(instanceId),
    });
  }

  /** The bridge's calls, one table per node: `of` finds the calling actor's bridge in its scope. */
  static handlers<S>(of: (scope: S) => HelpdeskBridge): Handlers<S> {
    return {
      'helpdesk.set': (scope, patch) => {
        const self = of(scope);
        return self.#control(() => self.#set(patch), true);
      },
      'helpdesk.activate': (scope) => {
        const self = of(scope);
        return self.#control(() => self.#config.activate(), true);
      },
      'helpdesk.delete': (scope) => {
        const self = of(scope);
        return self.#control(() => self.#remove(), true);
      },
      'helpdesk.inbound': (scope, inbound) => of(scope).#accept(inbound),
    };
  }

  #ctx(): ActorContext {
    if (!this.#env) throw new NotOwnerError(this.instanceId);
    return this.#env.ctx;
  }

  get #log() {
    return this.#ctx().log;
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  async onActivate(env: ExtensionEnv): Promise<void> {
    this.#env = env;
    this.#config.current = env.instance().config.helpdesk;
    this.#pruneTimer = setInterval(() => {
      void this.#control(() => this.#state.pruneSeen(), false).catch(() => undefined);
    }, PRUNE_EVERY_MS);
    if (!this.#config.current) return;
    const { outbound, inbound } = await this.#state.loadQueues();
    // Loaded entries may have reached Chatwoot before the previous owner stopped: check before posting.
    this.#outbound = outbound.map((e) => ({ ...e, attempts: Math.max(1, e.attempts) }));
    for (const entry of inbound) {
      // A send cut short by a crash may or may not have left: say so rather than risk sending it twice.
      if ((await this.#state.chatwootSeen(entry.message.messageId)) === 'sending') {
        await this.#state.write([
          this.#state.dequeue(entry.key),
          this.#state.seenChatwoot(entry.message.messageId, 'failed'),
        ]);
        void this.#control(
          () =>
            this.#note(
              entry.message.conversationId,
              'This message may not have reached WhatsApp: the service restarted while sending it.',
            ),
          false,
        ).catch(() => undefined);
      } else this.#inbound.push(entry);
    }
    if (this.#config.current.status === 'pending') {
      void this.#control(() => this.#config.activate(), false).catch(() => undefined);
    }
    this.#worker.kick();
  }

  async onMessage(message: NormalizedMessage, env: ExtensionEnv): Promise<void> {
    const config = this.#config.current;
    if (!config?.enabled || config.status === 'paused' || !forwardable(message, config)) return;
    if (message.fromMe && this.#ownSends.has(message.id)) return;
    if (this.#outbound.length >= MAX_OUTBOUND) {
      this.#log.warn(
        { messageId: message.id },
        'helpdesk: too many messages waiting for Chatwoot; this one is not forwarded',
      );
      return;
    }
    const { entry, op } = this.#state.outboundEntry(message);
    // The network forgot the message already: while the store is out, it waits here rather than being dropped.
    await untilStored(
      { assertOwner: () => env.ctx.assertOwner(), log: this.#log, abandoned: () => this.#stopping },
      () => env.ctx.writeOwned([op]),
      'helpdesk forwards',
    );
    this.#outbound.push(entry);
    this.#worker.kick();
  }

  async onConfigChanged(): Promise<void> {
    void this.#control(async () => {
      this.#config.current = await this.#config.stored();
    }, false).catch(() => undefined);
  }

  async onStop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#pruneTimer);
    this.#abort?.abort();
    await this.#worker.stop();
  }

  // ---- the worker -------------------------------------------------------------------------------

  /** Runs `run` on the worker, before any queued message; `preempt` cuts short a forward in flight. */
  #control<T>(run: () => Promise<T>, preempt: boolean): Promise<T> {
    const done = this.#worker.control(run);
    if (preempt) this.#abort?.abort();
    return done;
  }

  #runnable(): boolean {
    const c = this.#config.current;
    return !!c?.enabled && (c.status === 'active' || c.status === 'error');
  }

  /** Agent messages first (they do not wait on Chatwoot), then what waits for Chatwoot unless held off. */
  #nextJob(): (() => Promise<void>) | undefined {
    if (!this.#runnable()) return undefined;
    if (this.#inbound.length > 0) return () => this.#deliverNext();
    if (this.#outbound.length > 0 && Date.now() >= this.#retryAt) return () => this.#forwardNext();
    return undefined;
  }

  /** Leaves the queued messages for HELPDESK_RETRY_INTERVAL_MS (Chatwoot is unreachable or refuses us). */
  #holdOff(): void {
    this.#retryAt = Date.now() + this.deps.options.retryIntervalMs;
    this.#wakeAtRetry();
  }

  /** A timer can fire a millisecond before `Date.now()` reaches its time: then it waits the rest. */
  #wakeAtRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(
      () => {
        if (Date.now() < this.#retryAt) this.#wakeAtRetry();
        else this.#worker.kick();
      },
      Math.max(1, this.#retryAt - Date.now()),
    );
  }

  // ---- WhatsApp → Chatwoot ----------------------------------------------------------------------

  async #forwardNext(): Promise<void> {
    const entry = this.#outbound[0]!;
    const id = entry.message.id;
    if (this.#ownSends.has(id) || (await this.#state.whatsappSeen(id)) !== undefined) {
      await this.#state.write([this.#state.dequeue(entry.key)]);
      this.#outbound.shift();
      return;
    }
    const abort = new AbortController();
    this.#abort = abort;
    try {
      const config = await this.#config.withInbox(abort.signal);
      await forwardToChatwoot(
        {
          client: this.#config.client(config),
          config,
          state: this.#state,
          session: this.#session(),
          mediaMaxBytes: this.deps.media.maxBytes,
          signal: abort.signal,
          log: this.#log,
          groupName: (jid) => this.#groupName(jid),
        },
        entry.message,
        entry.attempts > 0,
      );
      await this.#state.write([this.#state.dequeue(entry.key), this.#state.seenWhatsapp(id, 'posted')]);
      this.#outbound.shift();
      await this.#config.succeeded();
    } catch (err) {
      entry.attempts++;
      if (aborted(err) || isOwnershipLoss(err)) {
        if (isOwnershipLoss(err)) throw err;
        return;
      }
      // Worth waiting for: an outage, or settings the operator must fix; anything else is this message's.
      const wait =
        err instanceof ChatwootError && (err.retryable || err.rejectsCredentials || err.failure === 'refused');
      if (wait) this.#holdOff();
      else {
        this.#log.warn({ err, messageId: id }, 'helpdesk: message not forwarded to Chatwoot');
        await this.#state.write([this.#state.dequeue(entry.key), this.#state.seenWhatsapp(id, 'dropped')]);
        this.#outbound.shift();
      }
      await this.#config.failed(err);
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }

  #session(): MsgNetSession | undefined {
    try {
      return this.#env!.session();
    } catch {
      return undefined;
    }
  }

  async #groupName(jid: string): Promise<string | undefined> {
    if (!this.#groupNames.has(jid)) {
      const groups = await this.#session()
        ?.groups.list(false)
        .catch(() => []);
      for (const g of groups ?? []) this.#groupNames.set(g.jid, g.name);
    }
    return this.#groupNames.get(jid);
  }

  // ---- Chatwoot → WhatsApp ----------------------------------------------------------------------

  /** A webhook the edge authenticated: queued (once per Chatwoot message id) for the worker. */
  async #accept(inbound: HelpdeskInbound): Promise<{ accepted: boolean }> {
    const c = this.#config.current;
    if (!c?.enabled || c.status === 'paused' || c.status === 'pending' || c.inboxId !== inbound.inboxId) {
      return { accepted: false };
    }
    if (inbound.kind === 'conversation-status') {
      void this.#control(() => this.#conversationStatus(inbound.conversationId, inbound.status), false).catch(
        () => undefined,
      );
      return { accepted: true };
    }
    if (this.#inbound.some((e) => e.message.messageId === inbound.messageId)) return { accepted: false };
    if ((await this.#state.chatwootSeen(inbound.messageId)) !== undefined) return { accepted: false };
    const { entry, ops } = this.#state.inboundEntry(inbound);
    await this.#state.write(ops);
    this.#inbound.push(entry);
    this.#worker.kick();
    return { accepted: true };
  }

  #rememberOwnSend(id: string): void {
    this.#ownSends.add(id);
  }

  async #deliverNext(): Promise<void> {
    const entry = this.#inbound[0]!;
    const m: AgentMessage = entry.message;
    await this.#state.write([this.#state.seenChatwoot(m.messageId, 'sending')]);
    const sent: string[] = [];
    try {
      const session = this.#env!.session();
      await deliverToWhatsapp(
        {
          session,
          config: this.#config.current!,
          state: this.#state,
          media: this.deps.media,
          onSent: (id) => {
            sent.push(id);
            this.#rememberOwnSend(id);
          },
        },
        m,
      );
      await this.#state.write([
        this.#state.dequeue(entry.key),
        this.#state.seenChatwoot(m.messageId, 'sent'),
        ...sent.map((id) => this.#state.seenWhatsapp(id, 'agent')),
      ]);
      this.#inbound.shift();
    } catch (err) {
      if (isOwnershipLoss(err)) throw err;
      this.#log.info({ err, chatwootMessage: m.messageId }, 'helpdesk: agent message not sent to WhatsApp');
      await this.#state.write([
        this.#state.dequeue(entry.key),
        this.#state.seenChatwoot(m.messageId, 'failed'),
        ...sent.map((id) => this.#state.seenWhatsapp(id, 'agent')),
      ]);
      this.#inbound.shift();
      await this.#note(m.conversationId, `Message not delivered to WhatsApp: ${reasonOf(err)}`);
    }
  }

  /** A private note in the conversation (what agents see when their message did not leave). */
  async #note(conversationId: number, content: string): Promise<void> {
    const config = this.#config.current;
    if (!config?.enabled) return;
    const client = this.#config.client(config);
    const abort = new AbortController();
    this.#abort = abort;
    try {
      await client.retrying(
        () => client.createMessage(conversationId, { content, messageType: 'outgoing', private: true }, abort.signal),
        abort.signal,
      );
      await this.#config.succeeded();
    } catch (err) {
      if (isOwnershipLoss(err)) throw err;
      if (aborted(err)) return;
      this.#log.warn({ err, conversationId }, 'helpdesk: could not post a private note');
      await this.#config.failed(err);
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }

  /** Chatwoot resolved (or reopened) a conversation: the next message follows `reopenResolved`. */
  async #conversationStatus(conversationId: number, status: string): Promise<void> {
    const jid = await this.#state.chatOfConversation(conversationId);
    if (!jid) return;
    const link = await this.#state.chatLink(jid);
    if (link?.conversationId !== conversationId) return;
    const resolved = status === 'resolved';
    if ((link.resolved ?? false) !== resolved) {
      await this.#state.saveChatLink(jid, { ...link, resolved, checkedAt: Date.now() });
    }
  }

  // ---- configuration and status -----------------------------------------------------------------

  /** POST /api/helpdesk/set (`BridgeConfig.set`); what waits for Chatwoot is then tried without a hold-off. */
  async #set(patch: HelpdeskPatch): Promise<{ config: HelpdeskConfig; warning?: string }> {
    const result = await this.#config.set(patch);
    this.#retryAt = 0;
    return result;
  }

  /** DELETE: the block and everything the bridge kept go; the Chatwoot inbox stays. */
  async #remove(): Promise<{ removed: boolean; inboxId: number | null }> {
    const block = await this.#config.stored();
    if (!block) return { removed: false, inboxId: null };
    // First, so that no message is queued meanwhile.
    this.#config.current = undefined;
    this.#outbound = [];
    this.#inbound = [];
    await this.#state.clear(true);
    await this.#ctx().writeConfigBlock('helpdesk', undefined);
    return { removed: true, inboxId: block.inboxId ?? null };
  }
}
