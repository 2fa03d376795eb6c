import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { verifySignature } from '../helpers/signature.js';
import { launchChromium } from '../helpers/chromium.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('settings panel at /settings (spec 4.9), in headless Chromium', () => {
  let node: TestNode;
  let receiver: WebhookReceiver;
  let browser: BrowserContext;
  let page: Page;
  let profileDir: string;
  // Kept after the run (git-ignored) so that a person can look at what the panel showed.
  const artifacts = join(process.cwd(), 'test-artifacts');

  before(async () => {
    node = await startTestNode({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_RETRY_MAX_MS: '50' });
    receiver = await WebhookReceiver.start();
    profileDir = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
    browser = await launchChromium(profileDir);
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await receiver?.stop();
    await node?.stop();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('serves one self-contained page with a strict CSP and no cookies', async () => {
    const res = await fetch(`${node.url}/settings`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('set-cookie')).to.equal(null);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("default-src 'none'").and.include("connect-src 'self'").and.not.include('unsafe-inline');
    const html = await res.text();
    expect(html).to.not.match(/<(script|link|img)[^>]+(src|href)=/i);
  });

  it('signs in, configures, shows the secret once, rotates and sends a signed test', async () => {
    const token = await node.createAccount('panel');
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${node.url}/settings`);

    // A wrong token is refused and the panel stays closed.
    await page.getByLabel('TokenAccount').fill('wrong-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The page's CSP forbids eval, so waits use locators (or polling from here), never string predicates.
    await page.locator('#error').filter({ hasText: /\S/ }).waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/token/i);
    expect(await page.locator('#panel').isHidden()).to.equal(true);

    await page.getByLabel('TokenAccount').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Webhook URL').waitFor({ state: 'visible' });
    expect(await page.getByLabel('Masked secret').textContent()).to.equal('none yet');
    // Kept in memory only: nothing in cookies or storage, and the field is cleared.
    expect(await page.context().cookies()).to.deep.equal([]);
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).to.equal(0);
    expect(await page.getByLabel('TokenAccount').inputValue()).to.equal('');

    await page.getByLabel('Webhook URL').fill(`${receiver.url}/panel`);
    // An unconfigured webhook shows the four default events ticked.
    for (const e of [
      'enterprise.trial.started',
      'enterprise.trial.ending',
      'enterprise.instance.billable',
      'enterprise.cycle.renewed',
    ]) {
      expect(await page.getByLabel(e).isChecked(), e).to.equal(true);
    }
    await page.getByLabel('enterprise.trial.started').uncheck();
    await page.getByLabel('enterprise.instance.billable').uncheck();
    await page.getByLabel('Enabled').check();
    await page.getByRole('button', { name: 'Save' }).click();
    const secretField = page.getByLabel('New secret (shown only now, copy it)');
    await secretField.waitFor({ state: 'visible' });
    const first = await secretField.inputValue();
    expect(first).to.match(/^whsec_/);
    const api = (await node.api.get('/api/account/webhook', { token })).body;
    expect(api).to.include({ url: `${receiver.url}/panel`, enabled: true });
    expect(api.events).to.deep.equal(['enterprise.trial.ending', 'enterprise.cycle.renewed']);
    expect(await page.getByLabel('Masked secret').textContent()).to.equal(api.secretMasked);

    // Saving again does not show the secret again.
    await page.getByLabel('enterprise.cycle.renewed').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await secretField.waitFor({ state: 'hidden' });
    expect((await node.api.get('/api/account/webhook', { token })).body.events).to.deep.equal([
      'enterprise.trial.ending',
    ]);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await until(async () => {
      const value = await secretField.inputValue();
      return value.startsWith('whsec_') && value !== first ? value : undefined;
    }, 'the page');
    const rotated = await secretField.inputValue();
    expect(rotated).to.not.equal(first);
    const masked = (await node.api.get('/api/account/webhook', { token })).body.secretMasked as string;
    expect(masked.endsWith(rotated.slice(-4))).to.equal(true);
    expect(await page.getByLabel('Masked secret').textContent()).to.equal(masked);

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page
      .locator('#test-result')
      .filter({ hasText: /queued/i })
      .waitFor();
    const got = await until(
      () => receiver.events('enterprise.webhook.test').find((r) => r.path === '/panel'),
      'the page',
    );
    expect(got.body).to.include({ event: 'enterprise.webhook.test', account: 'panel' });
    expect(verifySignature(got, rotated)).to.equal(true);
    expect(verifySignature(got, first)).to.equal(false);

    mkdirSync(artifacts, { recursive: true });
    const shot = join(artifacts, 'settings-panel.png');
    await page.screenshot({ path: shot, fullPage: true });
    const png = readFileSync(shot);
    expect(png.length).to.be.greaterThan(PNG_MAGIC.length);
    expect(png.subarray(0, PNG_MAGIC.length).equals(PNG_MAGIC)).to.equal(true);
    console.log(`      screenshot: ${shot}`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('TokenAccount').waitFor({ state: 'visible' });
    expect(await secretField.inputValue()).to.equal('');
    expect(errors).to.deep.equal([]);
  });
});
