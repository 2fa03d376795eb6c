import { z } from 'zod';
import { accountInputSchema, accountView } from '../../accounts/account-service.js';
import type { AccountService } from '../../accounts/account-service.js';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireGlobal } from '../auth.js';
import type { Authenticator } from '../auth.js';

/** How long a forced account deletion waits for each instance's device to be logged out (best effort). */
const UNLINK_TIMEOUT_MS = 10_000;

/** Operator endpoints (not in the spec): accounts, with the global token. */
export function adminRoutes(deps: {
  accounts: AccountService;
  auth: Authenticator;
  actors: ActorCaller;
  maxBodyBytes: number;
}) {
  const api = new ApiRouter({ prefix: '/api/admin', tag: 'Admin', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireGlobal(deps.auth);

  api.route(
    {
      method: 'post',
      path: '/accounts',
      summary: 'Create an account (its TokenAccount is shown only now)',
      auth: guard,
      rawBody: accountInputSchema,
      responses: { 201: '`{account: {name, token, instanceQuota, allowedOrigins}}`', 409: 'Account already exists' },
    },
    async (ctx, { body }) => {
      const { account, token } = await deps.accounts.create(body);
      ctx.status = 201;
      ctx.body = {
        success: true,
        message: 'Account created successfully; store the token now, it cannot be recovered later',
        account: {
          name: account.name,
          token,
          instanceQuota: account.instanceQuota,
          allowedOrigins: account.allowedOrigins,
        },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/accounts',
      summary: 'List the accounts',
      auth: guard,
      responses: { 200: '`{accounts: [{name, instanceQuota, allowedOrigins, createdAt}]}`' },
    },
    async (ctx) => {
      const accounts = await deps.accounts.list();
      ctx.body = {
        success: true,
        message: `${accounts.length} ${accounts.length === 1 ? 'Account' : 'Accounts'} found`,
        accounts: accounts.map(accountView),
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/accounts/:name/token',
      summary: 'Issue a new TokenAccount (the previous one is revoked)',
      auth: guard,
      responses: { 200: '`{account: {name, token}}`', 404: 'Account not found' },
    },
    async (ctx) => {
      const token = await deps.accounts.rotateToken(ctx.params.name ?? '');
      ctx.body = {
        success: true,
        message: 'New account token issued; the previous token is revoked',
        account: { name: ctx.params.name, token },
      };
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    api.route(
      {
        method: 'post',
        path: `/accounts/:name/${action}`,
        summary: disabled
          ? 'Disable an account: its tokens answer 401 and its instances stop, keeping their sessions'
          : 'Enable a disabled account: its tokens work again and its linked instances reconnect',
        auth: guard,
        responses: {
          200: '`{account: {name, instanceQuota, allowedOrigins, createdAt, disabled, disabledAt}}`',
          404: 'Account not found',
        },
      },
      async (ctx) => {
        const account = await deps.accounts.setDisabled(ctx.params.name ?? '', disabled);
        ctx.body = {
          success: true,
          message: disabled ? 'Account disabled' : 'Account enabled',
          account: accountView(account),
        };
      },
    );
  }

  api.route(
    {
      method: 'delete',
      path: '/accounts/:name',
      summary: 'Delete an account (with force=true, its instances first, as the instance delete does)',
      auth: guard,
      query: z.object({ force: queryParam.flag('force', 'Also delete its instances') }),
      responses: {
        200: '`{account: {name, deletedInstances}}`',
        404: 'Account not found',
        409: 'The account still has instances (without force=true)',
      },
    },
    async (ctx, { query }) => {
      const { account, deletedInstances } = await deps.accounts.delete(ctx.params.name ?? '', {
        force: query.force === true,
        unlink: async (instance) => {
          await deps.actors
            .for(ctx)
            .callIfOwned(instance.id, 'msgnet.logout', {}, UNLINK_TIMEOUT_MS)
            .catch((err: unknown) => {
              ctx.state.log.warn({ err, instance: instance.name }, 'could not unlink before deletion');
            });
        },
      });
      ctx.body = { success: true, message: 'Account deleted', account: { name: account.name, deletedInstances } };
    },
  );

  return api;
}
