import type { AccountService } from '../../accounts/account-service.js';
import { ApiRouter } from '../api-router.js';
import { requireAccount } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { principalAccount } from '../route-helpers.js';

/** The account's own endpoints besides its webhook: rotating its TokenAccount. */
export function accountRoutes(deps: { accounts: AccountService; auth: Authenticator; maxBodyBytes: number }) {
  const api = new ApiRouter({ prefix: '/api/account', tag: 'Account', maxBodyBytes: deps.maxBodyBytes });

  api.route(
    {
      method: 'post',
      path: '/token',
      summary: 'Issue a new TokenAccount (shown only now); the calling token is revoked on every node',
      auth: requireAccount(deps.auth),
      responses: { 200: '`{account: {name, token}}`' },
    },
    async (ctx) => {
      const { name } = principalAccount(ctx).account;
      const token = await deps.accounts.rotateToken(name);
      ctx.body = {
        success: true,
        message: 'New account token issued; the previous token is revoked',
        account: { name, token },
      };
    },
  );

  return api;
}
