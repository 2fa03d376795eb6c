import { expect } from 'chai';
import { pino } from 'pino';
import type { ActorContext } from '../../src/actors/instance-actor.js';
import { messagingBehavior } from '../../src/actors/messaging-behavior.js';
import { NotOwnerError } from '../../src/errors.js';
import type { MsgNetDriver, MsgNetSession } from '../../src/msgnet/msgnet-driver.js';
import { DEFAULT_SETTINGS } from '../../src/store/records.js';
import type { InstanceRecord } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { SecretBox } from '../../src/security/secret-box.js';

/** A driver whose `open` waits until the test lets it finish, counting what is done to its session. */
function slowDriver() {
  const calls = { resume: 0, close: 0 };
  let finish!: () => void;
  const opening = new Promise<void>((r) => (finish = r));
  const session = {
    state: 'disconnected',
    resume: async () => void calls.resume++,
    close: async () => void calls.close++,
  } as unknown as MsgNetSession;
  const driver = {
    name: 'sandbox',
    open: async () => {
      await opening;
      return session;
    },
    close: async () => undefined,
  } as unknown as MsgNetDriver;
  return { driver, calls, finish };
}

const instance = {
  id: 'i1',
  name: 'one',
  connection: { state: 'connected', updatedAt: new Date().toISOString() },
  config: { settings: DEFAULT_SETTINGS },
} as unknown as InstanceRecord;

const ctx = {
  instanceId: 'i1',
  nodeId: 'n1',
  epoch: 1,
  log: pino({ level: 'silent' }),
  store: {
    instances: { findById: async () => instance },
    ownedState: { list: async () => new Map() },
  } as unknown as Store,
  assertOwner: () => undefined,
  writeOwned: async () => undefined,
  clearOwned: async () => undefined,
  setConnection: async () => undefined,
  writeConfigBlock: async () => undefined,
} satisfies ActorContext;

describe('an actor stopped while its session is opening', () => {
  it('closes the session that open() then returns, never resumes it, and fails the activation', async () => {
    const { driver, calls, finish } = slowDriver();
    const behavior = messagingBehavior({
      driver,
      secrets: new SecretBox(Buffer.alloc(32, 1)),
      sink: { emit: async () => undefined },
    }).create('i1');
    const scope = behavior.scope(ctx);
    const activating = behavior.onActivate(scope);
    // The stop comes first: there is no session yet for onStop to close.
    await behavior.onStop(scope, 'lease-lost');
    finish();
    let failure: unknown;
    await activating.catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(NotOwnerError);
    expect(calls).to.deep.equal({ resume: 0, close: 1 });
  });
});
