import { expect } from 'chai';
import pino from 'pino';
import { ExtensionHost } from '../../src/actors/extension-host.js';
import type { ExtensionEnv, InstanceExtension, MessageTaken } from '../../src/actors/instance-extension.js';
import { NotOwnerError } from '../../src/errors.js';
import type { NormalizedMessage } from '../../src/msgnet/msgnet-events.js';

const message = (id: string) => ({ id }) as NormalizedMessage;
const env = {} as ExtensionEnv;

function host(extensions: InstanceExtension[], stopped = () => false) {
  return new ExtensionHost(
    extensions.map((e) => ({ create: () => e })),
    'instance-1',
    () => pino({ level: 'silent' }),
    stopped,
  );
}

/** Whether a promise settled within the current turn's microtasks (and with what). */
async function settledNow<T>(p: Promise<T>): Promise<{ value: T } | undefined> {
  return Promise.race([
    p.then((value) => ({ value })),
    new Promise<undefined>((r) => setImmediate(() => r(undefined))),
  ]);
}

describe('ExtensionHost: a message handed to the extensions, and whether each durably took it', () => {
  it('answers true only once every extension took it, its own queue included', async () => {
    let release!: () => void;
    const later = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const h = host([
      { onMessage: async (m) => void seen.push(`a:${m.id}`) },
      { onMessage: async (m): Promise<MessageTaken> => (seen.push(`b:${m.id}`), { taken: later }) },
    ]);
    const first = h.notify(message('1'), env);
    expect(await settledNow(first)).to.equal(undefined);
    // The next message is not held by the first one's deferred take.
    const second = h.notify(message('2'), env);
    await settledNow(second);
    expect(seen).to.deep.equal(['a:1', 'b:1', 'a:2', 'b:2']);
    release();
    expect(await first).to.equal(true);
    expect(await second).to.equal(true);
  });

  it('answers false when one extension could not take it, and the others still get it in order', async () => {
    const seen: string[] = [];
    const h = host([
      {
        onMessage: async (m) => {
          if (m.id === '1') throw new NotOwnerError('instance-1');
          seen.push(m.id);
        },
      },
      {
        onMessage: async (m): Promise<MessageTaken> => ({
          taken: m.id === '2' ? Promise.reject(new Error('store refused')) : Promise.resolve(),
        }),
      },
    ]);
    expect(await h.notify(message('1'), env)).to.equal(false);
    expect(await h.notify(message('2'), env)).to.equal(false);
    expect(await h.notify(message('3'), env)).to.equal(true);
    expect(seen).to.deep.equal(['2', '3']);
  });

  it('answers false for a message that reaches an extension after the actor stopped: the next owner gets it', async () => {
    let stopped = false;
    const seen: string[] = [];
    const h = host([{ onMessage: async (m) => void seen.push(m.id) }], () => stopped);
    expect(await h.notify(message('1'), env)).to.equal(true);
    stopped = true;
    expect(await h.notify(message('2'), env)).to.equal(false);
    expect(seen).to.deep.equal(['1']);
  });
});
