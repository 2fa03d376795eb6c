import { expect } from 'chai';
import { pino } from 'pino';
import type { ActorContext } from '../../src/actors/actor-context.js';
import { untilStored } from '../../src/actors/until-stored.js';
import { ConversationState } from '../../src/integrations/chatbot/conversation-state.js';
import { NotOwnerError, StoreUnavailableError } from '../../src/errors.js';

const log = pino({ level: 'silent' });

/** A write that finds the store out `failures` times, then succeeds. */
function flaky(failures: number) {
  const w = {
    calls: 0,
    write: async () => {
      w.calls++;
      if (w.calls <= failures) throw new StoreUnavailableError({ cause: new Error('database is locked') });
      return 'stored';
    },
  };
  return w;
}

describe('untilStored: an owned write waits for the store instead of dropping the work behind it', () => {
  it('tries again while the store is out and this node owns the instance', async () => {
    const w = flaky(2);
    expect(await untilStored({ assertOwner: () => undefined, log }, w.write, 'steps')).to.equal('stored');
    expect(w.calls).to.equal(3);
  });

  it('ends with the ownership: the owner check throws between attempts', async () => {
    const w = flaky(5);
    let owner = true;
    const waiting = untilStored(
      {
        assertOwner: () => {
          if (!owner) throw new NotOwnerError('i1');
        },
        log,
      },
      w.write,
      'steps',
    );
    owner = false;
    const err = await waiting.catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NotOwnerError);
    expect(w.calls, 'the first attempt only').to.equal(1);
  });

  it('gives up with the store error once the work is abandoned, and passes other errors through at once', async () => {
    const w = flaky(5);
    const err = await untilStored({ assertOwner: () => undefined, log, abandoned: () => true }, w.write, 'steps').catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(w.calls).to.equal(1);
    let calls = 0;
    const other = await untilStored(
      { assertOwner: () => undefined, log },
      async () => {
        calls++;
        throw new Error('constraint');
      },
      'steps',
    ).catch((e: unknown) => e);
    expect((other as Error).message).to.equal('constraint');
    expect(calls).to.equal(1);
  });
});

describe("the chatbot's conversation state: a step's write waits for the store", () => {
  const ctxWith = (w: { write: () => Promise<unknown> }, owner = () => undefined) =>
    ({
      instanceId: 'i1',
      log,
      assertOwner: owner,
      writeOwned: () => w.write(),
    }) as unknown as ActorContext;

  it('keeps the step (and the chat behind it) until the store takes it, then updates its copy', async () => {
    const w = flaky(2);
    const state = new ConversationState(ctxWith(w));
    const inbox = { botId: 'b1', texts: ['hello'], replyId: undefined, dueAt: 0 };
    await state.save('chat@s.whatsapp.net', { inbox });
    expect(w.calls).to.equal(3);
    expect(state.inboxes.get('chat@s.whatsapp.net')).to.deep.equal(inbox);
  });

  it('gives the step up once the extension stopped, its copy unchanged', async () => {
    const w = flaky(5);
    const state = new ConversationState(ctxWith(w), () => true);
    const err = await state
      .save('chat@s.whatsapp.net', { inbox: { botId: 'b1', texts: ['hello'], replyId: undefined, dueAt: 0 } })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(state.inboxes.size).to.equal(0);
  });
});
