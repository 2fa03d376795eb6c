import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { chatbotTriggerKey } from '../../store/chatbot-trigger-key.js';
import { CHATBOT_NAMESPACE } from '../../store/namespaces.js';
import type { ChatbotBlock, ChatbotBotRecord, ChatbotLinkRecord, InstanceRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { checkBot } from './bot-schema.js';
import type { BotPatch, BotSettings } from './bot-schema.js';
import { readChatState, sessionView } from './session-records.js';

export const INTEGRATION_NOT_FOUND = 'Chatbot integration not found';
export const BOT_NOT_FOUND = 'Bot not found';

export interface ChatbotServiceOptions {
  store: Store;
  allowPrivateUrls: boolean;
  log: Logger;
}

/** A bot as the API shows it (camelCase, like the rest of the API). */
export function botView(b: ChatbotBotRecord) {
  return {
    botId: b.botId,
    enabled: b.enabled,
    label: b.label,
    url: b.url,
    triggerType: b.triggerType,
    triggerOperator: b.triggerOperator ?? null,
    triggerValue: b.triggerValue ?? null,
    expireMinutes: b.expireMinutes,
    expireMessage: b.expireMessage,
    keywordFinish: b.keywordFinish,
    finishMessage: b.finishMessage,
    typingDelayMs: b.typingDelayMs,
    stopBotFromMe: b.stopBotFromMe,
    debounceSeconds: b.debounceSeconds,
    ignoreGroups: b.ignoreGroups,
    noStartFromMe: b.noStartFromMe,
    keepOpen: b.keepOpen,
    fallback: b.fallback,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}

/** The integration link with the spec's keys. */
function linkView(link: ChatbotLinkRecord | undefined, bots: ChatbotBotRecord[]) {
  return {
    status: link?.status ?? 'active',
    last_error: link?.lastError ?? null,
    fallback_bot_id: link?.fallbackBotId ?? bots.find((b) => b.fallback)?.botId ?? null,
  };
}

/** Reads and conditional saves of the link before giving up: each lost race means another write landed. */
const LINK_ATTEMPTS = 5;

const settingsOf = (b: ChatbotBotRecord): BotSettings => {
  const { instanceId: _i, botId: _b, createdAt: _c, updatedAt: _u, ...settings } = b;
  return settings;
};

/**
 * Bots and the integration link in the store: creation and update (called in the instance's actor turn,
 * which serialises them; the store's unique trigger key backs the rules up), removal (any node), the link
 * recomputed from the full bot list after every change, and the views with live enrichment.
 */
export class ChatbotService {
  constructor(private readonly options: ChatbotServiceOptions) {}

  /** Spec 2: one enabled `all` bot; keyword bots unique per (operator, value); one fallback bot. */
  #assertUnique(bots: ChatbotBotRecord[], bot: BotSettings, self: string | undefined): void {
    const key = chatbotTriggerKey(bot);
    const others = bots.filter((b) => b.botId !== self);
    const clash = key === undefined ? undefined : others.find((b) => chatbotTriggerKey(b) === key);
    if (clash) {
      throw new ConflictError(
        bot.triggerType === 'all'
          ? `An enabled bot with triggerType all already exists (botId ${clash.botId})`
          : `A keyword bot with triggerOperator ${bot.triggerOperator} and triggerValue '${bot.triggerValue}' already exists (botId ${clash.botId})`,
      );
    }
    const fallback = bot.fallback ? others.find((b) => b.fallback) : undefined;
    if (fallback) throw new ConflictError(`Another bot is already the fallback (botId ${fallback.botId})`);
  }

  async createBot(instanceId: string, patch: BotPatch): Promise<ChatbotBotRecord> {
    const settings = checkBot(undefined, patch, this.options.allowPrivateUrls);
    const bots = await this.options.store.chatbots.listBots(instanceId);
    this.#assertUnique(bots, settings, undefined);
    const now = new Date().toISOString();
    const bot: ChatbotBotRecord = { instanceId, botId: randomUUID(), ...settings, createdAt: now, updatedAt: now };
    await this.options.store.chatbots.insertBot(bot);
    await this.recomputeLink(instanceId, [...bots, bot]);
    return bot;
  }

  async updateBot(instanceId: string, botId: string, patch: BotPatch): Promise<ChatbotBotRecord> {
    const bots = await this.options.store.chatbots.listBots(instanceId);
    const existing = bots.find((b) => b.botId === botId);
    if (!existing) throw new NotFoundError(BOT_NOT_FOUND);
    const settings = checkBot(settingsOf(existing), patch, this.options.allowPrivateUrls);
    this.#assertUnique(bots, settings, botId);
    const bot: ChatbotBotRecord = { ...existing, ...settings, updatedAt: new Date().toISOString() };
    if (!(await this.options.store.chatbots.updateBot(bot))) throw new NotFoundError(BOT_NOT_FOUND);
    await this.recomputeLink(
      instanceId,
      bots.map((b) => (b.botId === botId ? bot : b)),
    );
    return bot;
  }

  /** Removes one bot, or all of them (the link goes with the last one). Idempotent. */
  async removeBots(instanceId: string, botId: string | undefined): Promise<{ deleted: number; remaining: number }> {
    const deleted = botId
      ? Number(await this.options.store.chatbots.deleteBot(instanceId, botId))
      : await this.options.store.chatbots.deleteAllBots(instanceId);
    const bots = await this.options.store.chatbots.listBots(instanceId);
    await this.recomputeLink(instanceId, bots);
    return { deleted, remaining: bots.length };
  }

  /** The link from the full bot list: re-activated, fallback re-derived; deleted when no bot is left. */
  async recomputeLink(instanceId: string, bots?: ChatbotBotRecord[]): Promise<void> {
    const list = bots ?? (await this.options.store.chatbots.listBots(instanceId));
    if (list.length === 0) {
      await this.options.store.chatbots.deleteLink(instanceId);
      return;
    }
    const saved = await this.#changeLink(instanceId, (previous) => ({
      instanceId,
      status: 'active',
      lastError: previous?.lastError,
      fallbackBotId: list.find((b) => b.fallback)?.botId,
      updatedAt: new Date().toISOString(),
    }));
    if (!saved) throw new ConflictError('The chatbot integration changed meanwhile; try again');
  }

  /** A flow call failed (`error`) or worked again: the link's status follows; the last error is kept. */
  async recordFlowHealth(instanceId: string, error: string | undefined): Promise<void> {
    // Never creates a link: one deleted meanwhile (its last bot removed) stays deleted.
    await this.#changeLink(instanceId, (link) => {
      if (!link || (error === undefined && link.status === 'active')) return undefined;
      return {
        ...link,
        status: error === undefined ? 'active' : 'error',
        lastError: error ?? link.lastError,
        updatedAt: new Date().toISOString(),
      };
    });
  }

  /**
   * Reads the link and saves `change(link)` compared and set on its version, reading again after a lost
   * race; `change` answering undefined leaves it. False when every attempt lost (heavy contention).
   */
  async #changeLink(
    instanceId: string,
    change: (link: ChatbotLinkRecord | undefined) => Omit<ChatbotLinkRecord, 'version'> | undefined,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < LINK_ATTEMPTS; attempt++) {
      const link = await this.options.store.chatbots.getLink(instanceId);
      const next = change(link);
      if (!next) return true;
      if (await this.options.store.chatbots.saveLink(next, link?.version)) return true;
    }
    return false;
  }

  /** The instance's bots. @throws NotFoundError without any bot (no integration), or when `botId` is not one of them. */
  async requireBots(instanceId: string, botId?: string): Promise<ChatbotBotRecord[]> {
    const bots = await this.options.store.chatbots.listBots(instanceId);
    if (bots.length === 0) throw new NotFoundError(INTEGRATION_NOT_FOUND);
    if (botId !== undefined && !bots.some((b) => b.botId === botId)) throw new NotFoundError(BOT_NOT_FOUND);
    return bots;
  }

  /** GET /api/chatbot/list: every bot (or one) with `active_sessions`, `last_activity_at` and the link. */
  async list(instanceId: string, botId: string | undefined) {
    const bots = await this.requireBots(instanceId, botId);
    const selected = botId === undefined ? bots : bots.filter((b) => b.botId === botId);
    const link = linkView(await this.options.store.chatbots.getLink(instanceId), bots);
    const state = readChatState(await this.options.store.ownedState.list(instanceId, CHATBOT_NAMESPACE));
    const active = new Map<string, number>();
    for (const s of state.sessions.values()) {
      if (s.status === 'opened' || s.status === 'paused') active.set(s.botId, (active.get(s.botId) ?? 0) + 1);
    }
    return {
      integration: link,
      bots: selected.map((b) => {
        const last = state.activity.get(b.botId);
        return {
          ...botView(b),
          active_sessions: active.get(b.botId) ?? 0,
          ...(last ? { last_activity_at: last } : {}),
          ...link,
        };
      }),
    };
  }

  /** GET /api/chatbot/sessions: the live sessions (opened, paused, held), of one bot or all. */
  async sessions(instanceId: string, botId: string | undefined) {
    await this.requireBots(instanceId, botId);
    const { sessions } = readChatState(await this.options.store.ownedState.list(instanceId, CHATBOT_NAMESPACE));
    return [...sessions.values()]
      .filter((s) => botId === undefined || s.botId === botId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map(sessionView);
  }

  /** The creation block's first bot; the `chatbot` summary of the creation response. */
  async createFromBlock(instance: InstanceRecord, block: ChatbotBlock) {
    const { enabled, url, triggerType, triggerOperator, triggerValue, label, ...flags } = block;
    try {
      const bot = await this.createBot(instance.id, {
        enabled,
        url,
        triggerType,
        triggerOperator,
        triggerValue,
        label,
        ...flags,
      });
      return { status: 'active' as const, ...botView(bot) };
    } catch (err) {
      if (!(err instanceof ValidationError || err instanceof ConflictError)) {
        this.options.log.error({ err, instance: instance.name }, 'chatbot block failed');
      }
      return { enabled: false, status: 'error' as const, error: (err as Error).message };
    }
  }

  /** What GET /api/instance/list shows of an instance's chatbot integration. */
  async summary(instanceId: string) {
    const bots = await this.options.store.chatbots.listBots(instanceId);
    if (bots.length === 0) return { enabled: false };
    const link = linkView(await this.options.store.chatbots.getLink(instanceId), bots);
    return {
      enabled: bots.some((b) => b.enabled),
      status: link.status,
      bots: bots.length,
      fallbackBotId: link.fallback_bot_id,
    };
  }
}
