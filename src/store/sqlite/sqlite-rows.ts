/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;

export const str = (row: Row, k: string): string => row[k] as string;

export function isUniqueViolation(err: unknown): boolean {
  return (
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
