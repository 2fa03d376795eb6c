import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Layer } from '@koa/router';
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import { openApiPath } from '../../src/http/openapi/openapi-document.js';
import type { OpenApiDocument } from '../../src/http/openapi/openapi-document.js';
import { launchChromium } from '../helpers/chromium.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';

/** Every (method, path) of every router the app mounts, read from the routers themselves. */
function mountedRoutes(node: TestNode): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = [];
  type Mounted = { router?: { stack: Layer[] }; routers?: { stack: Layer[] }[] } & object;
  for (const middleware of node.app.middleware as Mounted[]) {
    const routers = [...(middleware.router ? [middleware.router] : []), ...(middleware.routers ?? [])];
    for (const layer of routers.flatMap((r) => r.stack)) {
      for (const method of layer.methods) {
        if (method !== 'HEAD') routes.push({ method: method.toLowerCase(), path: String(layer.path) });
      }
    }
  }
  return routes;
}

describe('OpenAPI 3.1 document and the /docs page', () => {
  let node: TestNode;
  let doc: OpenApiDocument;
  let probeDir: string;

  before(async () => {
    probeDir = mkdtempSync(join(tmpdir(), 'switchboard-probe-'));
    // The probe and sandbox routes exist only when enabled: turn both on so that every route is mounted.
    node = await startTestNode({ TEST_PROBE_FILE: join(probeDir, 'probe.jsonl') });
    const res = await node.api.get('/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body as OpenApiDocument;
  });

  after(async () => {
    await node?.stop();
    if (probeDir) rmSync(probeDir, { recursive: true, force: true });
  });

  it('lists every route of every mounted router', () => {
    const routes = mountedRoutes(node);
    expect(routes.length).to.be.greaterThan(60);
    const missing = routes
      .filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method])
      .map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(missing, `routes missing from /openapi.json: ${missing.join(', ')}`).to.deep.equal([]);
    for (const path of [
      '/health',
      '/metrics',
      '/openapi.json',
      '/docs',
      '/api/cluster/probe/{instance}',
      '/api/sandbox/inbound/{instance}',
    ]) {
      expect(doc.paths, path).to.have.property(path);
    }
  });

  it('is OpenAPI 3.1 with an operation id, summary, responses and every path parameter declared', () => {
    expect(doc.openapi).to.equal('3.1.0');
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.summary, `${method} ${path}`).to.be.a('string').and.not.equal('');
        expect(Object.keys(op.responses), `${method} ${path}`).to.not.be.empty;
        expect(ids.has(op.operationId), op.operationId).to.equal(false);
        ids.add(op.operationId);
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect(declared, `${method} ${path}`).to.deep.equal(inPath);
      }
    }
  });

  it('documents bodies and queries from the zod schemas that validate them', async () => {
    const text = doc.paths['/api/message/text/{instance}']!.post!;
    const schema = (text.requestBody!.content as Record<string, { schema: Record<string, any> }>)['application/json']!
      .schema;
    expect(schema.type).to.equal('object');
    expect(schema.additionalProperties).to.equal(false);
    expect(Object.keys(schema.properties)).to.include.members(['number', 'text', 'message', 'delayMs', 'replyTo']);
    expect(schema.properties.text.maxLength).to.equal(65_536);
    expect(text.security).to.deep.include({ tokenQuery: [] });

    const history = doc.paths['/api/chat/history/{instance}']!.get!;
    expect((history.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)).to.deep.equal([
      'chat',
      'limit',
      'before',
    ]);
    const settings = doc.paths['/api/instance/settings/{instance}']!.post!;
    const settingsSchema = (settings.requestBody!.content as Record<string, { schema: Record<string, any> }>)[
      'application/json'
    ]!.schema;
    expect(settingsSchema.properties.autoRejectCalls.type).to.equal('boolean');
    // The global token never goes in a URL.
    expect(doc.paths['/api/admin/accounts']!.get!.security).to.not.deep.include({ tokenQuery: [] });

    // The same schema refuses what the document does not allow (a field it does not know is only ignored).
    const token = await node.createInstance(await node.createAccount('doc-check'), { name: 'doc' });
    const refused = await node.api.post('/api/message/text/doc', { number: '5511900000001', text: 5 }, { token });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.message).to.equal("Invalid request body: field 'text': expected string, received number");
  });

  it('/docs renders the document offline in headless Chromium (nothing loaded from elsewhere)', async () => {
    const res = await fetch(`${node.url}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('content-security-policy'))
      .to.include("default-src 'none'")
      .and.not.include('unsafe-inline');
    expect(await res.text()).to.not.match(/<(script|link|img)[^>]+(src|href)=/i);

    const profileDir = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
    let browser: BrowserContext | undefined;
    try {
      browser = await launchChromium(profileDir);
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      // Offline: any request that is not to the node fails, and is recorded.
      await page.route('**/*', (route) => {
        if (route.request().url().startsWith(node.url)) return route.continue();
        elsewhere.push(route.request().url());
        return route.abort();
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${node.url}/docs`);
      await page.locator('details summary .path', { hasText: '/api/message/text/{instance}' }).first().waitFor();
      expect(await page.locator('details').count()).to.equal(
        Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0),
      );
      await page.getByPlaceholder('Filter by path, summary or tag').fill('sandbox inbound');
      expect(await page.locator('details:visible').count()).to.equal(1);
      await page.locator('details:visible summary').click();
      expect(await page.locator('details:visible table').first().textContent()).to.include('instance');
      const artifacts = join(process.cwd(), 'test-artifacts');
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, 'api-docs.png'), fullPage: false });
      expect(elsewhere).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    } finally {
      await browser?.close();
      rmSync(profileDir, { recursive: true, force: true });
    }
  });
});
