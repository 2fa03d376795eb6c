import type { ApiClient } from './test-node.js';
import type { SimulatorClient } from './simulator.js';
import { until } from './until.js';

/** An instance linked to a simulated phone: its name, its TokenInstance and its number. */
export interface LinkedInstance {
  name: string;
  token: string;
  number: string;
}

export interface LinkFleetOptions {
  /** The node's API (any node of the cluster) and the account that owns the instances. */
  api: ApiClient;
  accountToken: string;
  control: SimulatorClient;
  count: number;
  /** Name and number prefixes, so fleets of one run do not collide. @default 'fleet', '55119' */
  prefix?: string;
  numberPrefix?: string;
  /** Links under way at once. @default 8 */
  concurrency?: number;
  /** What each phone has besides the simulator's phones, for the size of the first sync. @default none */
  book?: { contacts?: number; groups?: number; messagesPerChat?: number };
  /** The first index (a fleet linked in parts). @default 0 */
  from?: number;
  /** Told after each instance is connected (a bench's progress). */
  onLinked?: (done: number) => void;
}

/**
 * Creates `count` instances (numbered from `from`) and links each one to a phone of its own on the simulator, by QR: the node
 * shows the QR, the phone scans it, the instance connects after the 515 restart. Resolves once every one
 * reports `connected`.
 */
export async function linkFleet(o: LinkFleetOptions): Promise<LinkedInstance[]> {
  const prefix = o.prefix ?? 'fleet';
  const numberPrefix = o.numberPrefix ?? '55119';
  const out: LinkedInstance[] = [];
  const from = o.from ?? 0;
  let next = from;
  let done = 0;
  const one = async (i: number): Promise<LinkedInstance> => {
    const name = `${prefix}-${i}`;
    const number = `${numberPrefix}${String(i).padStart(13 - numberPrefix.length, '0')}`;
    await o.control.ok('POST', '/phones', { number, name: `Phone ${i}`, ...(o.book ? { book: o.book } : {}) });
    const created = await o.api.post('/api/instance/new', { name }, { token: o.accountToken });
    if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    const token = created.body.instance.token as string;
    // A client starts over when a link fails on the way: a 503 (an activation under load), a socket that
    // closed before its QR or before the scan (409: the QR is gone), or no connection within the wait.
    for (let attempt = 1; ; attempt++) {
      try {
        await linkOnce(o, name, token, number);
        break;
      } catch (err) {
        if (attempt >= 5) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    return { name, token, number };
  };
  const worker = async () => {
    for (let i = next++; i < from + o.count; i = next++) {
      out[i - from] = await one(i);
      o.onLinked?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 8, o.count) }, worker));
  return out;
}

/** One attempt: the QR, the phone's scan, then connected. */
async function linkOnce(o: LinkFleetOptions, name: string, token: string, number: string): Promise<void> {
  const qr = await o.api.get(`/api/instance/connect/${name}`, { token });
  if (qr.status === 200 && qr.body.status === 'connected') return;
  if (qr.status !== 200 || qr.body.status !== 'qr') throw new Error(`connect ${name}: ${qr.status} ${qr.text}`);
  await o.control.ok('POST', `/phones/${number}/scan`, { qr: qr.body.qrCode });
  // Polled gently: a fleet's linkers must not load the node they measure.
  await until(
    async () => (await connectionState(o.api, name, token)) === 'connected',
    `${name} connected`,
    60_000,
    200,
  );
}

/** An instance's connection state as its own token lists it. */
export async function connectionState(api: ApiClient, name: string, token: string): Promise<string | undefined> {
  const list = await api.get('/api/instance/list', { token });
  const instance = (list.body.instances as { name: string; connection?: { state: string } }[] | undefined)?.find(
    (x) => x.name === name,
  );
  return instance?.connection?.state;
}

/** How many instances of the account are connected (one list call with the account's token). */
export async function connectedCount(api: ApiClient, accountToken: string): Promise<number> {
  const list = await api.get('/api/instance/list', { token: accountToken });
  const instances = (list.body.instances as { connection?: { state: string } }[] | undefined) ?? [];
  return instances.filter((x) => x.connection?.state === 'connected').length;
}
