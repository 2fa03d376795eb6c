import { z } from 'zod';
import { ApiRouter } from '../api-router.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';
import { staticPage } from '../static-page.js';

/**
 * GET /openapi.json (the document of every declared route, built once on first use) and GET /docs, a
 * static page that renders it in the browser with nothing loaded from elsewhere (works offline).
 */
export function docsRoutes(document: () => OpenApiDocument) {
  const page = staticPage('docs.html');
  const api = new ApiRouter({ tag: 'Pages' });
  api.route(
    {
      method: 'get',
      path: '/openapi.json',
      summary: 'This API as an OpenAPI 3.1 document',
      auth: 'public',
      responses: {
        200: {
          description: 'The document',
          schema: z.looseObject({ openapi: z.literal('3.1.0'), paths: z.record(z.string(), z.unknown()) }),
        },
      },
    },
    (ctx) => {
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = document();
    },
  );
  api.route(
    {
      method: 'get',
      path: '/docs',
      summary: 'The API reference (an HTML page rendering /openapi.json)',
      auth: 'public',
      responses: { 200: { description: 'The page', contentType: 'text/html' } },
    },
    (ctx) => page.send(ctx),
  );
  return api;
}
