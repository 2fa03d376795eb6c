import { z } from 'zod';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { creationBodySchema, isCreationAlias } from '../../instances/creation-body.js';
import type { InstanceService } from '../../instances/instance-service.js';
import { settingsSchema } from '../../instances/settings-schema.js';
import type { Store } from '../../store/store.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireAccount, requireAccountOrInstance, requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { plainInvalidBody } from '../json-body.js';
import { principalAccount } from '../route-helpers.js';

interface Deps {
  instances: InstanceService;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** Reaches the instance's actor, where one runs (live settings, logout before deletion). */
  actors: ActorCaller;
}

/** How long deletion waits for the owner to unlink the device before deleting anyway. */
const UNLINK_TIMEOUT_MS = 10_000;

const listQuery = z.object({
  instanceName: queryParam.text('Only these instances: comma-separated names').transform((value) =>
    value === undefined
      ? undefined
      : [
          ...new Set(
            value
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          ),
        ],
  ),
});

/** Spec section 4.1: instances and their settings. */
export function instanceRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/instance', tag: 'Instances', maxBodyBytes: deps.maxBodyBytes });
  const instanceGuard = requireInstance(deps.store, deps.auth);

  api.route(
    {
      method: 'post',
      path: '/new',
      summary: 'Create an instance',
      description:
        "Settings may also be given flat at the top level, and the hosted product's field names (chatwoot*, typebot*, proxyUsername, …) are accepted. " +
        'Rate-limited separately (RATE_LIMIT_CREATE_PER_MINUTE).',
      auth: requireAccount(deps.auth),
      rawBody: creationBodySchema,
      aliases: isCreationAlias,
      responses: {
        201: 'Instance created successfully: `{instance: {name, token, …}, …}`',
        403: 'Account instance quota exceeded',
        409: 'Name or token already used',
      },
    },
    async (ctx, { body }) => {
      const result = await deps.instances.create(principalAccount(ctx).account, body);
      ctx.status = 201;
      ctx.body = { success: true, message: 'Instance created successfully', ...result };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/list',
      summary: "The account's instances (a TokenInstance sees its own), each with its token and status",
      auth: requireAccountOrInstance(deps.auth),
      query: listQuery,
      responses: {
        200: '`{status, instances: [{name, token, status, connection, profile, settings, …}]}`',
        404: 'Instance not found (one name asked, unknown)',
      },
    },
    async (ctx, { query }) => {
      const p = principalAccount(ctx);
      const instances = await deps.instances.list(
        p.account,
        query.instanceName,
        p.kind === 'instance' ? p.instance : undefined,
      );
      ctx.body = {
        success: true,
        message: `${instances.length} ${instances.length === 1 ? 'Instance' : 'Instances'} found`,
        // The one instance's status (a TokenInstance, or one name asked), else `found`.
        status: instances.length === 1 ? instances[0]!.status : 'found',
        instances,
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/delete/:instance',
      summary: 'Unlink and delete an instance',
      auth: requireInstance(deps.store, deps.auth, { accountOnly: true }),
      responses: { 200: 'Instance deleted: `{instance: {name, status: "deleted"}}`' },
    },
    async (ctx) => {
      const instance = ctx.state.instance!;
      // Unlink the device first, so that the phone does not keep a dead linked device; best effort.
      await deps.actors
        .for(ctx)
        .callIfOwned(instance.id, 'msgnet.logout', {}, UNLINK_TIMEOUT_MS)
        .catch((err: unknown) => {
          ctx.state.log.warn({ err, instance: instance.name }, 'could not unlink before deletion');
        });
      await deps.instances.delete(instance);
      ctx.body = {
        success: true,
        message: 'Instance deleted',
        instance: { name: instance.name, status: 'deleted' },
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/settings/:instance',
      summary: 'Change behaviour settings (at least one)',
      auth: instanceGuard,
      rawBody: settingsSchema,
      invalidBody: plainInvalidBody,
      responses: { 200: 'Settings updated successfully: `{settings}`' },
    },
    async (ctx, { body }) => {
      const settings = await deps.instances.updateSettings(ctx.state.instance!, body);
      // The owner (if the instance runs) re-reads the settings; they are already saved whatever it answers.
      await deps.actors
        .for(ctx)
        .callIfOwned(ctx.state.instance!.id, 'settings.apply', {}, UNLINK_TIMEOUT_MS)
        .catch((err: unknown) => {
          ctx.state.log.warn({ err }, 'settings saved but not applied live yet');
        });
      ctx.body = { success: true, message: 'Settings updated successfully', settings };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/token/:instance',
      summary: 'Issue a new TokenInstance; the previous one is revoked on every node',
      auth: requireInstance(deps.store, deps.auth, { accountOnly: true }),
      responses: { 200: '`{instance: {name, token}}`' },
    },
    async (ctx) => {
      const instance = ctx.state.instance!;
      const token = await deps.instances.rotateToken(instance);
      // Webhook envelopes carry the instance token: the owner re-reads it now (else at its next settings change or start).
      await deps.actors
        .for(ctx)
        .callIfOwned(instance.id, 'settings.apply', {}, UNLINK_TIMEOUT_MS)
        .catch((err: unknown) => {
          ctx.state.log.warn({ err }, 'token rotated; the owner has not re-read it yet');
        });
      ctx.body = {
        success: true,
        message: 'New instance token issued; the previous token is revoked',
        instance: { name: instance.name, token },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/getSettings/:instance',
      summary: 'Read the behaviour settings',
      auth: instanceGuard,
      responses: { 200: '`{settings}`' },
    },
    (ctx) => {
      ctx.body = {
        success: true,
        message: 'Settings retrieved successfully',
        settings: ctx.state.instance!.config.settings,
      };
    },
  );

  return api;
}
