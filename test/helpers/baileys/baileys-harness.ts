import type { Logger } from 'pino';
import { initAuthCreds } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { BaileysDriver } from '../../../src/msgnet/baileys/baileys-driver.js';
import type { BaileysDriverOptions } from '../../../src/msgnet/baileys/baileys-driver.js';
import { CREDS_KEY, serialize } from '../../../src/msgnet/baileys/baileys-auth-state.js';
import type { MsgNetSession, ProxySettings } from '../../../src/msgnet/msgnet-driver.js';
import type { ConnectionEvent, MsgNetEvent } from '../../../src/msgnet/msgnet-events.js';
import { DEFAULT_SETTINGS } from '../../../src/store/records.js';
import type { InstanceSettings } from '../../../src/store/records.js';
import { ManualClock } from '../manual-clock.js';
import { FakeSocketFactory, OWN_ID } from './fake-baileys-socket.js';
import { MemoryAuthStore } from './memory-auth-store.js';

export const silentLog = pino({ level: 'silent' });

/** Saves creds of a device that finished pairing (what `resume` needs to reconnect). */
export function seedLinkedCreds(store: MemoryAuthStore): void {
  const creds = initAuthCreds();
  creds.me = { id: OWN_ID, name: 'Me' };
  creds.account = { details: Buffer.from('adv-details'), accountSignature: Buffer.from('sig') };
  store.data.set(CREDS_KEY, serialize(creds));
}

export interface Harness {
  driver: BaileysDriver;
  /** The driver's clock: reconnect delays and link deadlines pass only when the test moves it. */
  clock: ManualClock;
  session: MsgNetSession;
  store: MemoryAuthStore;
  factory: FakeSocketFactory;
  events: MsgNetEvent[];
  settings: InstanceSettings;
  /** Changes the instance's proxy, as a saved proxy block does (read at the next socket). */
  setProxy(proxy: ProxySettings | undefined): void;
}

export interface HarnessOptions {
  linked?: boolean;
  settings?: Partial<InstanceSettings>;
  proxy?: ProxySettings;
  store?: MemoryAuthStore;
  driver?: Partial<BaileysDriverOptions>;
  /** The session's logger (as the actor gives it: bound to the instance). @default silent */
  log?: Logger;
  /** The owner check the actor gives the session (the store's epoch). @default always the owner */
  stillOwner?: () => Promise<boolean>;
  /** The synchronous check before every write to the network. @default none */
  assertMayAct?: () => void;
}

export async function openSession(options: HarnessOptions = {}): Promise<Harness> {
  const store = options.store ?? new MemoryAuthStore();
  if (options.linked) seedLinkedCreds(store);
  const factory = new FakeSocketFactory();
  const events: MsgNetEvent[] = [];
  const settings: InstanceSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  let proxy = options.proxy;
  const clock = new ManualClock();
  const driver = new BaileysDriver({
    clock,
    makeSocket: factory.make,
    backoff: { baseMs: 10, maxMs: 40 },
    random: () => 0,
    linkTimeoutMs: 1_000,
    ...options.driver,
  });
  const session = await driver.open({
    instanceId: 'inst-1',
    auth: store,
    proxy: () => proxy,
    settings: () => settings,
    emit: (event) => events.push(event),
    log: options.log ?? silentLog,
    ...(options.stillOwner ? { stillOwner: options.stillOwner } : {}),
    ...(options.assertMayAct ? { assertMayAct: options.assertMayAct } : {}),
  });
  return {
    driver,
    clock,
    session,
    store,
    factory,
    events,
    settings,
    setProxy: (p) => {
      proxy = p;
    },
  };
}

/** A linked session whose socket has opened. */
export async function connectedSession(options: HarnessOptions = {}): Promise<Harness> {
  const h = await openSession({ ...options, linked: true });
  await h.session.resume();
  h.factory.last.open();
  h.events.length = 0;
  return h;
}

export function connectionEvents(events: MsgNetEvent[]): ConnectionEvent[] {
  return events.filter((e): e is ConnectionEvent => e.type === 'connection');
}
