import { expect } from 'chai';
import { RunnableInstances } from '../../src/cluster/runnable-instances.js';

/** A store whose runnable set and version the test moves, recording the reads in order. */
function fakeInstances() {
  const state = { version: 0, ids: ['a', 'b'], reads: [] as string[] };
  return {
    state,
    repo: {
      async runnableVersion() {
        state.reads.push('version');
        return state.version;
      },
      async listRunnable() {
        state.reads.push('list');
        return [...state.ids];
      },
    },
  };
}

/** The repository whose list takes 200 ms of `clock` to read. */
function slowList(repo: ReturnType<typeof fakeInstances>['repo'], clock: { now: number }) {
  return {
    ...repo,
    async listRunnable() {
      clock.now += 200;
      return repo.listRunnable();
    },
  };
}

describe('RunnableInstances', () => {
  it('lists once, then reads only the version while it stays', async () => {
    const { state, repo } = fakeInstances();
    const runnable = new RunnableInstances(repo);
    const first = await runnable.read();
    expect(first.ids).to.deep.equal(['a', 'b']);
    expect(first.has('a')).to.equal(true);
    expect(first.has('c')).to.equal(false);
    await runnable.read();
    await runnable.read();
    expect(state.reads).to.deep.equal(['version', 'list', 'version', 'version']);
  });

  it('lists again when the version moves, the version read first', async () => {
    const { state, repo } = fakeInstances();
    const runnable = new RunnableInstances(repo);
    await runnable.read();
    state.ids = ['b', 'c'];
    state.version = 1;
    const next = await runnable.read();
    expect(next.ids).to.deep.equal(['b', 'c']);
    expect([next.has('a'), next.has('c')]).to.deep.equal([false, true]);
    expect(state.reads).to.deep.equal(['version', 'list', 'version', 'list']);
  });

  it('lists again after a failed list, though the version has not moved since', async () => {
    const { state, repo } = fakeInstances();
    let down = false;
    const runnable = new RunnableInstances({
      runnableVersion: () => repo.runnableVersion(),
      listRunnable: async () => {
        if (down) throw new Error('store down');
        return repo.listRunnable();
      },
    });
    await runnable.read();
    [state.version, state.ids, down] = [1, ['c'], true];
    expect(await runnable.read().catch((e: unknown) => e)).to.be.instanceOf(Error);
    down = false;
    expect((await runnable.read()).ids).to.deep.equal(['c']);
  });

  it('holds a moved version back for ten times its last read, so a slow list is not read every pass', async () => {
    const { state, repo } = fakeInstances();
    const clock = { now: 0 };
    const runnable = new RunnableInstances(slowList(repo, clock), () => clock.now);
    await runnable.read();
    state.ids = ['b', 'c'];
    state.version = 1;
    clock.now += 1000;
    const held = await runnable.read();
    expect(held.ids, '1 s after a 200 ms read').to.deep.equal(['a', 'b']);
    expect(held.current, 'held back: not current').to.equal(false);
    clock.now += 1000;
    state.version = 2; // still moving: only the time lets it through
    const read = await runnable.read();
    expect(read.ids, '2 s after it').to.deep.equal(['b', 'c']);
    expect(read.current).to.equal(true);
    expect(state.reads.filter((r) => r === 'list')).to.have.length(2);
  });

  it('reads a moved list at once when the version held still since the last pass', async () => {
    const { state, repo } = fakeInstances();
    const clock = { now: 0 };
    const runnable = new RunnableInstances(slowList(repo, clock), () => clock.now);
    await runnable.read();
    [state.version, state.ids] = [1, ['c']];
    expect((await runnable.read()).ids, 'moved: held back').to.deep.equal(['a', 'b']);
    [state.version, state.ids] = [2, ['d']];
    expect((await runnable.read()).ids, 'moved again: held back').to.deep.equal(['a', 'b']);
    const settled = await runnable.read();
    expect(settled.ids, 'the same version as the pass before: read').to.deep.equal(['d']);
    expect(settled.current).to.equal(true);
  });
});
