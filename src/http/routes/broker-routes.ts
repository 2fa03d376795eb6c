import { z } from 'zod';
import { NotFoundError, UnavailableError, ValidationError } from '../../errors.js';
import { isEventName } from '../../events/event-names.js';
import type { BrokerTransport } from '../../events/webhooks/delivery.js';
import type { BrokerConfig } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
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

/**
 * An instance's events to a message broker (RabbitMQ, NATS JetStream): on or off and which events, like a webhook. A node
 * without the broker's URL answers 503, so nothing is turned on that no node would publish.
 */
export function brokerRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/events', tag: 'Brokers', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);

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
        let events = instance.config[broker]?.events ?? [];
        if (body.events !== undefined) {
          events = [...new Set(body.events.map((e) => e.trim()).filter(Boolean))];
          const unknown = events.find((e) => !isEventName(e));
          if (unknown !== undefined) throw new ValidationError(`Invalid request body: unknown event '${unknown}'`);
        }
        const config: BrokerConfig = { enabled: body.enabled, events };
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
          summary: `Read an instance's ${title} configuration`,
          auth: guard,
          responses: { 200: `\`{${broker}: {enabled, events}}\``, 503: unavailable },
        },
        (ctx) => {
          available();
          ctx.body = {
            success: true,
            message: `${title} configuration retrieved`,
            [broker]: brokerView(ctx.state.instance!.config[broker]),
          };
        },
      );
    }
  }
  return api;
}
