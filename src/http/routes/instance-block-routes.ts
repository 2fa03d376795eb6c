import Router from '@koa/router';
import type { Router as ActorRouter } from '../../cluster/router.js';
import { ValidationError } from '../../errors.js';
import type { BlockSettings } from '../../instances/block-settings.js';
import type { Store } from '../../store/store.js';
import { isPlainObject } from '../../validation.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';

interface Deps {
  blocks: BlockSettings;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  router: ActorRouter;
  callTimeoutMs: number;
}

/**
 * The storage and proxy blocks of an instance after its creation (the hosted product's endpoints): any
 * node saves them; the owner, if the instance runs, re-reads its configuration. Secrets are never returned.
 */
export function instanceBlockRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/instance' });
  const guard = requireInstance(deps.store, deps.auth);

  router.post('/s3/:instance', guard, jsonBody(deps.maxBodyBytes), async (ctx) => {
    const s3 = await deps.blocks.saveStorage(ctx.state.instance!, bodyOf(ctx));
    ctx.body = { success: true, message: 'Storage configuration saved successfully', s3 };
  });

  router.get('/getS3/:instance', guard, (ctx) => {
    ctx.body = { success: true, message: 'Storage configuration retrieved successfully', s3: deps.blocks.storage(ctx.state.instance!) };
  });

  router.post('/proxy/:instance', guard, jsonBody(deps.maxBodyBytes), async (ctx) => {
    const instance = ctx.state.instance!;
    const raw = bodyOf(ctx);
    if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
    const { reconnect = false, ...fields } = raw;
    if (reconnect !== null && typeof reconnect !== 'boolean') throw new ValidationError("Invalid request body: field 'reconnect': expected boolean");
    const proxy = await deps.blocks.saveProxy(instance, fields);
    const log = ctx.state.log;
    // The running session reads the proxy at its next connection; `reconnect` makes that now.
    const applied = await deps.router.callIfOwned(instance.id, 'settings.apply', {}, deps.callTimeoutMs).catch((err: unknown) => {
      log.warn({ err }, 'proxy saved but not applied live yet');
      return undefined;
    });
    let reconnectError: string | undefined;
    let reconnected = false;
    if (reconnect === true && applied !== undefined) {
      try {
        await deps.router.call(instance.id, 'msgnet.reconnect', {}, deps.callTimeoutMs);
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
  });

  router.get('/getProxy/:instance', guard, (ctx) => {
    ctx.body = { success: true, message: 'Proxy configuration retrieved successfully', proxy: deps.blocks.proxy(ctx.state.instance!) };
  });

  return router;
}
