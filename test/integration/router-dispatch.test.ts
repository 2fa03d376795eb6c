import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApiRouter } from '../../src/http/api-router.js';
import type { AppState } from '../../src/http/app-state.js';
import { dispatchRouters, routesUnderHeads } from '../../src/http/router-dispatch.js';

/** A router whose routes answer their own name, counting how often @koa/router matched a path against it. */
function answering(prefix: string, paths: string[]): { api: ApiRouter; matched: () => number } {
  const api = new ApiRouter({ tag: 'Test', ...(prefix ? { prefix } : {}) });
  for (const path of paths) {
    api.route({ method: 'get', path, summary: path, auth: 'public', responses: { 200: 'ok' } }, (ctx) => {
      ctx.body = { route: `${prefix}${path}` };
    });
  }
  let matched = 0;
  const match = api.koa.match.bind(api.koa);
  api.koa.match = (path, method) => {
    matched++;
    return match(path, method);
  };
  return { api, matched: () => matched };
}

describe('dispatchRouters: each request is matched only against the routers that could answer it', () => {
  let server: Server;
  let base: string;
  const metrics = answering('', ['/metrics']);
  const console_ = answering('', ['/console', '/console/console.js']);
  const anything = answering('', ['/:page/about']);
  const instance = answering('/api/instance', ['/getSettings/:instance']);
  const health = answering('', ['/health']);

  before(async () => {
    const app = new Koa<AppState>();
    app.use(routesUnderHeads(health.api));
    app.use(dispatchRouters([metrics.api, console_.api, anything.api, instance.api]));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => server.close());

  const get = async (path: string, method = 'GET') => {
    const res = await fetch(base + path, { method });
    return { status: res.status, allow: res.headers.get('allow'), text: await res.text() };
  };

  it('passes a router without a prefix by when none of its routes can start with the first segment', async () => {
    const before = [metrics.matched(), console_.matched(), anything.matched(), health.matched()];
    const res = await get('/api/instance/getSettings/x');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.text)).to.deep.equal({ route: '/api/instance/getSettings/:instance' });
    // Only the router whose first route segment is a parameter was tried besides the answering one.
    expect([metrics.matched(), console_.matched(), anything.matched(), health.matched()]).to.deep.equal([
      before[0],
      before[1],
      before[2]! + 1,
      before[3],
    ]);
  });

  it('matches a router without a prefix by its routes’ first segments, in any case and with a trailing slash', async () => {
    expect(JSON.parse((await get('/METRICS/')).text)).to.deep.equal({ route: '/metrics' });
    expect(JSON.parse((await get('/console/console.js')).text)).to.deep.equal({ route: '/console/console.js' });
    expect(JSON.parse((await get('/Health')).text)).to.deep.equal({ route: '/health' });
    expect(JSON.parse((await get('/docs/about')).text)).to.deep.equal({ route: '/:page/about' });
  });

  it('still answers 405 with Allow for a known path and another method', async () => {
    const res = await get('/metrics', 'POST');
    expect(res.status).to.equal(405);
    expect(res.allow).to.contain('GET');
  });

  it('leaves an unknown path to what comes after (404)', async () => {
    expect((await get('/nothing/here')).status).to.equal(404);
  });
});
