import { expect } from 'chai';
import { countOperations } from '../../src/store/count-operations.js';
import type { Store } from '../../src/store/store.js';

/** A store with two repositories whose methods read their own fields (as the real ones read private state). */
function fakeStore(): Store {
  class Instances {
    #rows = new Map([['i1', { id: 'i1' }]]);
    async findById(id: string) {
      return this.#rows.get(id);
    }
    async listRunnable() {
      return [...this.#rows.keys()];
    }
  }
  class Accounts {
    #n = 3;
    async count() {
      return this.#n;
    }
  }
  return {
    kind: 'sqlite',
    instances: new Instances(),
    accounts: new Accounts(),
    ping: async () => undefined,
    close: async () => undefined,
  } as unknown as Store;
}

describe('countOperations: the store calls of a node, by repository', () => {
  it('counts each repository call once, and the calls still answer (private fields reachable)', async () => {
    const counted = countOperations(fakeStore());
    const store = counted.store;
    expect(await store.instances.findById('i1')).to.deep.equal({ id: 'i1' });
    expect(await store.instances.listRunnable()).to.deep.equal(['i1']);
    expect(await store.accounts.count()).to.equal(3);
    await store.ping();
    expect(store.kind).to.equal('sqlite');
    expect(counted.counts()).to.deep.equal({ instances: 2, accounts: 1 });
    const repo = store.instances as unknown as Record<string, unknown>;
    expect(repo.findById, 'one wrapper per method, made once').to.equal(repo.findById);
  });

  it('reports a call that held the event loop past the threshold, by repository and method', async () => {
    const store = fakeStore();
    const instances = store.instances as unknown as { listRunnable: () => Promise<string[]> };
    // A synchronous store (SQLite) waiting on another process's lock holds the loop before it returns.
    instances.listRunnable = () => {
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // busy
      }
      return Promise.resolve(['i1']);
    };
    const blocking: [string, number][] = [];
    const counted = countOperations(store, { blockingMs: 40, onBlocking: (call, ms) => blocking.push([call, ms]) });
    await counted.store.instances.findById('i1');
    expect(blocking, 'a quick call').to.deep.equal([]);
    expect(await counted.store.instances.listRunnable()).to.deep.equal(['i1']);
    expect(blocking).to.have.length(1);
    expect(blocking[0]![0]).to.equal('instances.listRunnable');
    expect(blocking[0]![1]).to.be.at.least(60);
  });
});
