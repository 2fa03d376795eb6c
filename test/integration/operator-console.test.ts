import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.js';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('operator console at /console, in headless Chromium', function () {
  this.timeout(60_000);
  let node: TestNode;
  let browser: BrowserContext;
  let page: Page;
  let profileDir: string;
  // Kept after the run (git-ignored) so that a person can look at what the console showed.
  const artifacts = join(process.cwd(), 'test-artifacts');
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  async function screenshot(name: string): Promise<void> {
    mkdirSync(artifacts, { recursive: true });
    const shot = join(artifacts, name);
    await page.screenshot({ path: shot, fullPage: true });
    const png = readFileSync(shot);
    expect(png.subarray(0, PNG_MAGIC.length).equals(PNG_MAGIC)).to.equal(true);
    console.log(`      screenshot: ${shot}`);
  }

  before(async () => {
    node = await startTestNode();
    profileDir = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
    browser = await launchChromium(profileDir, { viewport: { width: 1440, height: 900 } });
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // CSP violations and failed loads are reported as console errors.
    // The expected failed loads: the wrong-token sign-in's 401, and the 502 of a connect while WhatsApp is out of reach.
    const expected = /status of (401|502)/;
    page.on('console', (m) => {
      if (m.type() === 'error' && !expected.test(m.text())) consoleErrors.push(m.text());
    });
  });

  after(async () => {
    await browser?.close();
    await node?.stop();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('serves a page, its scripts and a stylesheet of its own, under a CSP without inline code', async () => {
    const res = await fetch(`${node.url}/console`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('set-cookie')).to.equal(null);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("default-src 'none'").and.include("script-src 'self'").and.include("connect-src 'self'");
    expect(csp).to.not.include('unsafe-inline').and.not.include('unsafe-eval');
    const html = await res.text();
    // No inline script or style, no inline handlers, nothing from another origin.
    expect(html).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html)
      .to.not.match(/<style/i)
      .and.not.match(/\son[a-z]+=/i)
      .and.not.match(/\sstyle=/i);
    for (const [, url] of html.matchAll(/\s(?:src|href)="([^"]*)"/g)) expect(url).to.match(/^(\/console\/|data:,$)/);
    for (const file of ['console.js', 'console-view.js', 'console-events.js']) {
      const js = await fetch(`${node.url}/console/${file}`);
      expect(js.status, file).to.equal(200);
      expect(js.headers.get('content-type')).to.match(/^text\/javascript/);
      expect(await js.text(), file).to.not.match(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|localStorage|sessionStorage|document\.cookie/,
      );
    }
    const css = await fetch(`${node.url}/console/console.css`);
    expect(css.headers.get('content-type')).to.match(/^text\/css/);
    expect(await css.text()).to.not.match(/url\(|@import/);
  });

  it('signs in, creates and links an instance live, changes a setting and shows incoming messages', async () => {
    const token = await node.createAccount('frontline');
    await node.createInstance(token, { name: 'billing' });
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    await page.goto(`${node.url}/console`);

    // A wrong token is refused and the workspace stays closed.
    await page.getByLabel('TokenAccount').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#error').filter({ hasText: 'Invalid token' }).waitFor();
    expect(await page.locator('#workspace').isHidden()).to.equal(true);
    await screenshot('console-signin-error.png');

    await page.getByLabel('TokenAccount').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#live[data-state=live]').waitFor();
    await page.locator('#account-name').filter({ hasText: 'frontline' }).waitFor();
    expect(await page.getByLabel('TokenAccount').inputValue()).to.equal('');
    const list = page.getByRole('list', { name: 'Instance list' });
    await list.getByRole('button', { name: /billing/ }).waitFor();
    // Kept in memory only.
    expect(await page.context().cookies()).to.deep.equal([]);
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).to.equal(0);
    expect(page.url()).to.not.include(token);

    // Create: the new instance is selected and its TokenInstance is shown once.
    await page.getByLabel('New instance').fill('front-desk');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#detail-name').filter({ hasText: 'front-desk' }).waitFor();
    const instanceToken = await page.getByLabel(/Instance token/).inputValue();
    const acct = await node.store.accounts.findByName('frontline');
    const created = await node.store.instances.findByName(acct!.id, 'front-desk');
    expect(created).to.not.equal(undefined);
    expect((await node.api.get('/api/instance/list', { token: instanceToken })).body.instances[0].name).to.equal(
      'front-desk',
    );
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel(/Instance token/).isHidden()).to.equal(true);
    expect(await page.locator('#detail-state').textContent()).to.equal('Disconnected');

    // WhatsApp out of reach: the connect fails at once with the cause, which the detail keeps showing.
    const fault = await node.api.post(
      '/api/sandbox/fault/front-desk',
      { operation: 'network', message: 'getaddrinfo ENOTFOUND web.whatsapp.com' },
      { token: instanceToken },
    );
    expect(fault.status, fault.text).to.equal(200);
    await page.getByRole('button', { name: 'Show QR code' }).click();
    await page.locator('#error').filter({ hasText: 'could not reach WhatsApp' }).waitFor();
    await page.locator('#detail-error').filter({ hasText: 'getaddrinfo ENOTFOUND web.whatsapp.com' }).waitFor();

    // Connect: the QR code is an image that decodes.
    await page.getByRole('button', { name: 'Show QR code' }).click();
    const qr = page.getByRole('img', { name: 'QR code to link this instance' });
    await qr.waitFor({ state: 'visible' });
    expect(await qr.getAttribute('src')).to.match(/^data:image\/png;base64,/);
    const decodedWidth = await qr.evaluate(async (node) => {
      const img = node as unknown as { decode(): Promise<void>; naturalWidth: number };
      await img.decode();
      return img.naturalWidth;
    });
    expect(decodedWidth).to.be.greaterThan(100);
    await page.locator('#detail-state').filter({ hasText: 'Waiting for link' }).waitFor();
    await screenshot('console-qr.png');

    // The phone scans it: the state turns connected without a reload.
    const link = await node.api.post('/api/sandbox/link/front-desk', { number: '5511955550001' }, { token });
    expect(link.status, link.text).to.equal(200);
    await page.locator('#detail-state').filter({ hasText: 'Connected' }).waitFor();
    await qr.waitFor({ state: 'hidden' });
    await page.locator('#detail-number').filter({ hasText: '+5511955550001' }).waitFor();
    await page.locator('#detail-error-row').waitFor({ state: 'hidden' });
    await list
      .getByRole('button', { name: /front-desk/ })
      .filter({ hasText: 'Connected' })
      .waitFor();
    await page
      .locator('#event-list .event')
      .filter({ hasText: 'front-desk' })
      .filter({ hasText: 'State: Connected' })
      .first()
      .waitFor();
    expect(navigations).to.equal(1);

    // A setting: only what changed is sent, and the saved values come back.
    await page.getByLabel(/Mark received messages as read/).check();
    await page.getByLabel(/Message sent to a rejected caller/).fill('Busy now, write to us <b>please</b>');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .locator('#settings-note')
      .filter({ hasText: /^Saved at/ })
      .waitFor();
    const settings = (await node.api.get('/api/instance/getSettings/front-desk', { token })).body.settings;
    expect(settings).to.include({
      autoReadMessages: true,
      callRejectMessage: 'Busy now, write to us <b>please</b>',
      disableHistorySync: true,
    });

    // An incoming message appears live; what it says is shown as text, never as markup.
    const inbound = await node.api.post(
      '/api/sandbox/inbound/front-desk',
      { from: '5511912345678', text: 'Hello <img src=x> & <b>welcome</b>', pushName: 'Ana <script>' },
      { token },
    );
    expect(inbound.status, inbound.text).to.equal(200);
    const event = page.locator('#event-list .event').filter({ hasText: 'message.exchange' }).first();
    await event.waitFor();
    expect(await event.locator('.text').textContent()).to.equal(
      '← Ana <script> +5511912345678: Hello <img src=x> & <b>welcome</b>',
    );
    expect(await page.locator('#event-list img, #event-list b, #event-list script').count()).to.equal(0);
    await event.locator('summary').click();
    expect(await event.locator('pre').textContent()).to.include('"text": "Hello <img src=x> & <b>welcome</b>"');

    // The filter keeps the selected instance's events only.
    await page.getByLabel('selected instance only').check();
    await list.getByRole('button', { name: /billing/ }).click();
    await page.locator('#detail-name').filter({ hasText: 'billing' }).waitFor();
    expect(await page.locator('#event-list .event').count()).to.equal(0);
    await page.getByLabel('selected instance only').uncheck();
    expect(await page.locator('#event-list .event').count()).to.be.greaterThan(2);

    // A pairing code instead of a QR code.
    await page.getByLabel('or link with a phone number').fill('5511955550002');
    await page.getByRole('button', { name: 'Get pairing code' }).click();
    const code = page.getByLabel('Pairing code');
    await code.filter({ hasText: /^[A-Z0-9]{8}$/ }).waitFor();
    await list.getByRole('button', { name: /front-desk/ }).click();
    await screenshot('console-workspace.png');

    expect(navigations).to.equal(1);
    expect(pageErrors).to.deep.equal([]);
    expect(consoleErrors).to.deep.equal([]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('TokenAccount').waitFor({ state: 'visible' });
    expect(await page.locator('#workspace').isHidden()).to.equal(true);
    expect(await page.locator('#instance-list li').count()).to.equal(0);
  });

  it('lays out on a narrow screen too', async () => {
    const token = await node.createAccount('narrow');
    await node.createInstance(token, { name: 'mobile-desk' });
    await page.setViewportSize({ width: 700, height: 1000 });
    await page.goto(`${node.url}/console`);
    await page.getByLabel('TokenAccount').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('list', { name: 'Instance list' })
      .getByRole('button', { name: /mobile-desk/ })
      .click();
    await page.locator('#detail-name').filter({ hasText: 'mobile-desk' }).waitFor();
    const box = await page.locator('#detail').boundingBox();
    expect(box!.width).to.be.at.most(700);
    await screenshot('console-narrow.png');
    expect(pageErrors).to.deep.equal([]);
    expect(consoleErrors).to.deep.equal([]);
  });

  it('signs out by itself when the TokenAccount is rotated', async () => {
    // The previous test left this page signed in as "narrow".
    await page.locator('#live[data-state=live]').waitFor();
    const rotated = await node.api.post('/api/admin/accounts/narrow/token', undefined, { token: ADMIN_TOKEN });
    expect(rotated.status, rotated.text).to.equal(200);
    await page.locator('#error').filter({ hasText: 'Your token is no longer valid' }).waitFor();
    expect(await page.locator('#workspace').isHidden()).to.equal(true);
    expect(await page.getByLabel('TokenAccount').isVisible()).to.equal(true);
  });
});
