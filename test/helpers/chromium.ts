import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { BrowserContext, LaunchOptions } from 'playwright-core';

/** Flags that keep Chromium off the network (this machine has none) and quiet in a container as root. */
const QUIET = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`, else the headless
 * build shipped inside the `@sparticuz/chromium` package (unpacked from the package itself, no download), so
 * that `npm test` passes on a fresh clone after `npm ci` alone.
 */
async function chromiumBinary(): Promise<{ executablePath: string; args: string[] }> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return { executablePath: configured, args: ['--headless', ...QUIET] };
  if (existsSync('/usr/bin/chromium')) return { executablePath: '/usr/bin/chromium', args: ['--headless', ...QUIET] };
  const { default: packaged } = await import('@sparticuz/chromium');
  return { executablePath: await packaged.executablePath(), args: [...packaged.args, ...QUIET] };
}

/** A headless Chromium with a fresh profile in `profileDir` (a persistent context is how playwright takes one). */
export async function launchChromium(
  profileDir: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  const { executablePath, args } = await chromiumBinary();
  const launch: LaunchOptions = { executablePath, headless: true, args };
  return chromium.launchPersistentContext(profileDir, { ...launch, ...options });
}
