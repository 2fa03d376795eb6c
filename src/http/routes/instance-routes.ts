import Router from '@koa/router';
import type { Router as ActorRouter } from '../../cluster/router.js';
import type { InstanceService } from '../../instances/instance-service.js';
import type { Store } from '../../store/store.js';
import type { AppContext, AppState } from '../app-state.js';
import { requireAccount, requireAccountOrInstance, requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody, plainInvalidBody } from '../json-body.js';

interface Deps {
  instances: InstanceService;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** Reaches the instance's actor, where one runs (live settings, logout before deletion). */
  router: ActorRouter;
}

/** How long deletion waits for the owner to unlink the device before deleting anyway. */
const UNLINK_TIMEOUT_MS = 10_000;

function principalAccount(ctx: AppContext) {
  const p = ctx.state.principal;
  if (!p || p.kind === 'global') throw new Error('route reached without an account principal');
  return p;
}

function nameFilter(raw: string | string[] | undefined): string[] | undefined {
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (value === undefined || value.trim() === '') return undefined;
  return [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
}

/** Spec section 4.1: instances and their settings. */
export function instanceRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/instance' });
  const instanceGuard = requireInstance(deps.store, deps.auth);

  router.post('/new', requireAccount(deps.auth), jsonBody(deps.maxBodyBytes), async (ctx) => {
    const result = await deps.instances.create(principalAccount(ctx).account, bodyOf(ctx));
    ctx.status = 201;
    ctx.body = { success: true, message: 'Instance created successfully', ...result };
  });

  router.get('/list', requireAccountOrInstance(deps.auth), async (ctx) => {
    const p = principalAccount(ctx);
    const instances = await deps.instances.list(
      p.account,
      nameFilter(ctx.query.instanceName),
      p.kind === 'instance' ? p.instance : undefined,
    );
    ctx.body = {
      success: true,
      message: `${instances.length} ${instances.length === 1 ? 'Instance' : 'Instances'} found`,
      instances,
    };
  });

  router.delete(
    '/delete/:instance',
    requireInstance(deps.store, deps.auth, { accountOnly: true }),
    async (ctx) => {
      const instance = ctx.state.instance!;
      // Unlink the device first, so that the phone does not keep a dead linked device; best effort.
      await deps.router.callIfOwned(instance.id, 'msgnet.logout', {}, UNLINK_TIMEOUT_MS).catch((err: unknown) => {
        ctx.state.log.warn({ err, instance: instance.name }, 'could not unlink before deletion');
      });
      await deps.instances.delete(instance);
      ctx.body = { success: true, message: 'Instance deleted successfully', instance: { name: instance.name, status: 'deleted' } };
    },
  );

  router.post('/settings/:instance', instanceGuard, jsonBody(deps.maxBodyBytes, plainInvalidBody), async (ctx) => {
    const settings = await deps.instances.updateSettings(ctx.state.instance!, bodyOf(ctx));
    // The owner (if the instance runs) re-reads the settings; they are already saved whatever it answers.
    await deps.router.callIfOwned(ctx.state.instance!.id, 'settings.apply', {}, UNLINK_TIMEOUT_MS).catch((err: unknown) => {
      ctx.state.log.warn({ err }, 'settings saved but not applied live yet');
    });
    ctx.body = { success: true, message: 'Settings updated successfully', settings };
  });

  router.get('/getSettings/:instance', instanceGuard, (ctx) => {
    ctx.body = { success: true, message: 'Settings retrieved successfully', settings: ctx.state.instance!.config.settings };
  });

  return router;
}
