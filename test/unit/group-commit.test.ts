import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';

/** The SQLite store's group commit: one transaction per turn, each write alone in its outcome. */
describe('GroupCommit', () => {
  let dir: string;
  let db: Database.Database;
  let group: GroupCommit;
  const rows = () => (db.prepare('SELECT v FROM t ORDER BY v').all() as { v: string }[]).map((r) => r.v);
  const insert = (v: string) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
    db = new Database(join(dir, 'db.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)');
    group = new GroupCommit(db);
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the writes of one turn in one transaction, in order, each answering its own result', async () => {
    const inTransaction: boolean[] = [];
    const seen: string[][] = [];
    const writes = ['a', 'b', 'c'].map((v) =>
      group.run(() => {
        inTransaction.push(db.inTransaction);
        // Each write sees the ones before it in the same transaction.
        seen.push(rows());
        return insert(v)();
      }),
    );
    expect(rows(), 'nothing is written before the turn ends').to.deep.equal([]);
    expect(await Promise.all(writes)).to.deep.equal([1, 1, 1]);
    expect(inTransaction).to.deep.equal([true, true, true]);
    expect(seen).to.deep.equal([[], ['a'], ['a', 'b']]);
    expect(rows()).to.deep.equal(['a', 'b', 'c']);
  });

  it('a failing write rolls back only itself: the others of its turn commit', async () => {
    await group.run(insert('taken'));
    const outcomes = await Promise.allSettled([
      group.run(insert('x')),
      group.run(() => {
        insert('y')();
        // Fails after a write of its own: that write goes too, not the others.
        return insert('taken')();
      }),
      group.run(insert('z')),
    ]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).to.match(/UNIQUE constraint failed/);
    expect(rows()).to.deep.equal(['taken', 'x', 'z']);
  });

  it('when the file stays locked past the busy timeout, every write of the turn fails and none is written', async () => {
    db.pragma('busy_timeout = 50');
    const other = new Database(join(dir, 'db.sqlite'));
    other.prepare('BEGIN IMMEDIATE').run();
    try {
      const outcomes = await Promise.allSettled([group.run(insert('p')), group.run(insert('q'))]);
      expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).to.match(/locked|busy/i);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    expect(rows()).to.deep.equal([]);
    // The next turn writes again.
    await group.run(insert('r'));
    expect(rows()).to.deep.equal(['r']);
  });
});
