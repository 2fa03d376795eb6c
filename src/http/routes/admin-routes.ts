import { accountInputSchema, accountView } from '../../accounts/account-service.js';
import type { AccountService } from '../../accounts/account-service.js';
import { ApiRouter } from '../api-router.js';
import { requireGlobal } from '../auth.js';
import type { Authenticator } from '../auth.js';

/** Operator endpoints (not in the spec): accounts, with the global token. */
export function adminRoutes(deps: { accounts: AccountService; auth: Authenticator; maxBodyBytes: number }) {
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

  return api;
}
