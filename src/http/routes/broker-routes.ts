import { z } from 'zod';
import { NotFoundError, UnavailableError, ValidationError } from '../../errors.js';
import { isEventName } from '../../events/event-names.js';
import type { BrokerTransport } from '../../events/webhooks/delivery.js';
import type { BrokerConfig } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { ApiRouter } from '../api-router.js';
import { requireAccountScope, requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** The brokers this node publishes to (their URL is set). */
  brokers: readonly BrokerTransport[];
}

/** Per broker: its name in messages, the path segment of its routes, and the option that turns it on. */
const BROKERS: Record<BrokerTransport, { title: string; path: string; option: string }> = {
  rabbitmq: { title: 'RabbitMQ', path: 'Rabbitmq', option: 'AMQP_URL' },
  nats: { title: 'NATS JetStream', path: 'Nats', option: 'NATS_URL' },
};

const brokerBody = z.strictObject({
  enabled: z.boolean().describe('Publish this instance’s events to the broker'),
  events: z.array(z.string().max(64)).max(64).optional().describe('Events to publish (empty: all); omitted: unchanged'),
});

export function brokerView(config: BrokerConfig | undefined) {
  return { enabled: config?.enabled ?? false, events: config?.events ?? [] };
}

/** Where an instance's block for a broker comes from: its own, its account's switch, or neither (off). */
type BrokerSource = 'instance' | 'account' | 'none';

/** The events list of a body, checked; `undefined` when the body leaves it unchanged. */
function eventsOf(body: { events?: string[] | undefined }): string[] | undefined {
  if (body.events === undefined) return undefined;
  const events = [...new Set(body.events.map((e) => e.trim()).filter(Boolean))];
  const unknown = events.find((e) => !isEventName(e));
  if (unknown !== undefined) throw new ValidationError(`Invalid request body: unknown event '${unknown}'`);
  return events;
}

/**
 * An instance's events to a message broker (RabbitMQ, NATS JetStream): on or off and which events, like a webhook. A node
 * without the broker's URL answers 503, so nothing is turned on that no node would publish. An account's
 * switch (the same routes without `:instance`, with its TokenAccount) is the default of its instances
 * that have no block of their own; an instance's own block, once set, wins.
 */
export function brokerRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/events', tag: 'Brokers', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);
  const accountGuard = requireAccountScope(deps.store, deps.auth);

  for (const broker of Object.keys(BROKERS) as BrokerTransport[]) {
    const { title, path, option } = BROKERS[broker];
    const unavailable = `${title} is not configured on this server (${option} is unset)`;
    const available = () => {
      if (!deps.brokers.includes(broker)) throw new UnavailableError(unavailable);
    };

    api.route(
      {
        method: 'post',
        path: `/${broker}/:instance`,
        summary: `Publish an instance's events to ${title}`,
        auth: guard,
        body: brokerBody,
        responses: { 200: `\`{${broker}: {enabled, events}}\``, 503: unavailable },
      },
      async (ctx, { body }) => {
        available();
        const instance = ctx.state.instance!;
        const config: BrokerConfig = {
          enabled: body.enabled,
          events: eventsOf(body) ?? instance.config[broker]?.events ?? [],
        };
        if (!(await deps.store.instances.updateConfigBlock(instance.id, broker, config))) {
          throw new NotFoundError('Instance not found');
        }
        ctx.body = { success: true, message: `${title} configuration saved`, [broker]: brokerView(config) };
      },
    );

    for (const read of [`/get${path}/:instance`, `/${broker}/:instance`]) {
      api.route(
        {
          method: 'get',
          path: read,
          summary: `Read an instance's ${title} configuration (its own, or else its account's switch)`,
          auth: guard,
          responses: { 200: `\`{${broker}: {enabled, events}, source: instance|account|none}\``, 503: unavailable },
        },
        async (ctx) => {
          available();
          const instance = ctx.state.instance!;
          const own = instance.config[broker];
          const inherited = own
            ? undefined
            : (await deps.store.accounts.findById(instance.accountId))?.brokers?.[broker];
          const source: BrokerSource = own ? 'instance' : inherited ? 'account' : 'none';
          ctx.body = {
            success: true,
            message: `${title} configuration retrieved`,
            [broker]: brokerView(own ?? inherited),
            source,
          };
        },
      );
    }

    api.route(
      {
        method: 'post',
        path: `/${broker}`,
        summary: `Publish the events of every instance of the account to ${title} (those without a block of their own)`,
        auth: accountGuard,
        body: brokerBody,
        responses: { 200: `\`{${broker}: {enabled, events}, scope: "account"}\``, 503: unavailable },
      },
      async (ctx, { body }) => {
        available();
        const account = ctx.state.account!;
        const before = (await deps.store.accounts.findById(account.id))?.brokers?.[broker];
        const config: BrokerConfig = { enabled: body.enabled, events: eventsOf(body) ?? before?.events ?? [] };
        if (!(await deps.store.accounts.setBroker(account.id, broker, config))) {
          throw new NotFoundError('Account not found');
        }
        ctx.body = {
          success: true,
          message: `${title} configuration saved`,
          [broker]: brokerView(config),
          scope: 'account',
        };
      },
    );

    for (const read of [`/get${path}`, `/${broker}`]) {
      api.route(
        {
          method: 'get',
          path: read,
          summary: `Read the account's ${title} switch`,
          auth: accountGuard,
          responses: { 200: `\`{${broker}: {enabled, events}, scope: "account"}\``, 503: unavailable },
        },
        async (ctx) => {
          available();
          const account = await deps.store.accounts.findById(ctx.state.account!.id);
          ctx.body = {
            success: true,
            message: `${title} configuration retrieved`,
            [broker]: brokerView(account?.brokers?.[broker]),
            scope: 'account',
          };
        },
      );
    }
  }
  return api;
}
