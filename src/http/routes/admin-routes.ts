import Router from '@koa/router';
import { accountView } from '../../accounts/account-service.js';
import type { AccountService } from '../../accounts/account-service.js';
import type { AppState } from '../app-state.js';
import { requireGlobal } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';

/** Operator endpoints (not in the spec): accounts, with the global token. */
export function adminRoutes(deps: { accounts: AccountService; auth: Authenticator; maxBodyBytes: number }) {
  const router = new Router<AppState>({ prefix: '/api/admin' });
  const guard = requireGlobal(deps.auth);

  router.post('/accounts', guard, jsonBody(deps.maxBodyBytes), async (ctx) => {
    const { account, token } = await deps.accounts.create(bodyOf(ctx));
    ctx.status = 201;
    ctx.body = {
      success: true,
      message: 'Account created successfully; store the token now, it cannot be recovered later',
      account: { name: account.name, token, instanceQuota: account.instanceQuota, allowedOrigins: account.allowedOrigins },
    };
  });

  router.get('/accounts', guard, async (ctx) => {
    const accounts = await deps.accounts.list();
    ctx.body = {
      success: true,
      message: `${accounts.length} ${accounts.length === 1 ? 'Account' : 'Accounts'} found`,
      accounts: accounts.map(accountView),
    };
  });

  router.post('/accounts/:name/token', guard, async (ctx) => {
    const token = await deps.accounts.rotateToken(ctx.params.name ?? '');
    ctx.body = {
      success: true,
      message: 'New account token issued; the previous token is revoked',
      account: { name: ctx.params.name, token },
    };
  });

  return router;
}
