import type Database from 'better-sqlite3';
import { BoundedMap } from '../../util/bounded-map.js';

/** Distinct SQL texts kept prepared: the repositories' statements, and the few `IN (?, …)` widths in use. */
const MAX_STATEMENTS = 512;

/**
 * Makes `db.prepare` answer a statement prepared once per SQL text. better-sqlite3 compiles the SQL on
 * every `prepare`, about a tenth of a simple read's time; a statement is reusable as long as no caller
 * iterates it while another runs it (the repositories use `run`, `get` and `all` only).
 */
export function cacheStatements(db: Database.Database): Database.Database {
  const prepared = new BoundedMap<string, Database.Statement>(MAX_STATEMENTS);
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    let statement = prepared.get(sql);
    if (!statement) {
      statement = prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  }) as Database.Database['prepare'];
  return db;
}
