import { ApiRouter } from '../api-router.js';
import { staticPage } from '../static-page.js';

/**
 * GET /settings: the account-webhook settings panel of spec 4.9, one static page (read once at start)
 * that calls /api/account/webhook* with the TokenAccount typed in; no auth here, the API checks it.
 */
export function settingsPanelRoutes() {
  const page = staticPage('settings.html');
  const api = new ApiRouter({ tag: 'Pages' });
  api.route(
    {
      method: 'get',
      path: '/settings',
      summary: 'The account-webhook settings panel (an HTML page)',
      auth: 'public',
      responses: { 200: { description: 'The page', contentType: 'text/html' } },
    },
    (ctx) => page.send(ctx),
  );
  return api;
}
