import { z } from 'zod';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { ValidationError } from '../../errors.js';
import type { BlockSettings } from '../../instances/block-settings.js';
import type { Store } from '../../store/store.js';
import { isPlainObject } from '../../validation.js';
import { blockBodySchema, isBlockAlias } from '../../instances/creation-body.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';

interface Deps {
  blocks: BlockSettings;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  actors: ActorCaller;
}

/**
 * The storage and proxy blocks of an instance after its creation (the hosted product's endpoints): any
 * node saves them; the owner, if the instance runs, re-reads its configuration. Secrets are never returned.
 */
export function instanceBlockRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/instance', tag: 'Instances', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);

  api.route(
    {
      method: 'post',
      path: '/s3/:instance',
      summary: 'Save the storage (S3) block; omitted fields keep their values, the secret key is never returned',
      auth: guard,
      rawBody: blockBodySchema('s3'),
      aliases: isBlockAlias('s3'),
      responses: {
        200: '`S3 configuration updated`, `{s3}`: the storage summary, `secretKey` null (never returned), with `status` (`ok`, `error` and its cause, `unchecked`)',
      },
    },
    async (ctx, { body }) => {
      const s3 = await deps.blocks.saveStorage(ctx.state.instance!, body);
      ctx.body = { success: true, message: 'S3 configuration updated', s3: { ...s3, secretKey: null } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/getS3/:instance',
      summary: 'The storage (S3) block, `secretKey` null (never returned; instance summaries mask it)',
      auth: guard,
      responses: { 200: '`{s3}`' },
    },
    (ctx) => {
      ctx.body = {
        success: true,
        message: 'Storage configuration retrieved successfully',
        s3: { ...deps.blocks.storage(ctx.state.instance!), secretKey: null },
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/proxy/:instance',
      summary: 'Save the proxy block (applied at the next connection; `reconnect: true` reconnects now)',
      auth: guard,
      rawBody: blockBodySchema('proxy').extend({ reconnect: z.boolean().optional() }),
      aliases: isBlockAlias('proxy'),
      responses: { 200: '`{proxy, reconnected, reconnectError?}` (no password)' },
    },
    async (ctx, { body: raw }) => {
      const instance = ctx.state.instance!;
      if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
      const { reconnect = false, ...fields } = raw;
      if (reconnect !== null && typeof reconnect !== 'boolean') {
        throw new ValidationError("Invalid request body: field 'reconnect': expected boolean");
      }
      const proxy = await deps.blocks.saveProxy(instance, fields);
      const log = ctx.state.log;
      // The running session reads the proxy at its next connection; `reconnect` makes that now.
      const applied = await deps.actors
        .for(ctx)
        .callIfOwned(instance.id, 'settings.apply', {})
        .catch((err: unknown) => {
          log.warn({ err }, 'proxy saved but not applied live yet');
          return undefined;
        });
      let reconnectError: string | undefined;
      let reconnected = false;
      if (reconnect === true && applied !== undefined) {
        try {
          await deps.actors.for(ctx).call(instance.id, 'msgnet.reconnect', {});
          reconnected = true;
        } catch (err) {
          reconnectError = (err as Error).message;
        }
      }
      ctx.body = {
        success: true,
        message: 'Proxy configuration saved successfully',
        proxy: deps.blocks.proxy({ ...instance, config: { ...instance.config, proxy } }),
        reconnected,
        ...(reconnectError !== undefined ? { reconnectError } : {}),
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/getProxy/:instance',
      summary: 'The proxy block (no password)',
      auth: guard,
      responses: { 200: '`{proxy}`' },
    },
    (ctx) => {
      ctx.body = {
        success: true,
        message: 'Proxy configuration retrieved successfully',
        proxy: deps.blocks.proxy(ctx.state.instance!),
      };
    },
  );

  return api;
}
