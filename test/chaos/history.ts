/** What happened to one operation of the run (Jepsen's invoke, then ok / fail / info). */
export type Outcome = 'invoke' | 'ok' | 'fail' | 'info';

export interface Operation {
  index: number;
  /** `nemesis`, or the client worker that ran it. */
  process: string;
  kind: string;
  /** Operation fields: instance, key, node, text, value… */
  fields: Record<string, unknown>;
  outcome: Outcome;
  /** Milliseconds since the run started, at the invocation and at the completion. */
  start: number;
  end?: number;
  detail?: string;
}

/**
 * The run's history: every operation with its outcome. `info` is an outcome the client cannot know (a
 * timeout, a lost reply): the checkers allow either result for it, never a duplicate.
 */
export class History {
  readonly operations: Operation[] = [];
  readonly #started = performance.now();

  #now(): number {
    return Math.round(performance.now() - this.#started);
  }

  invoke(process: string, kind: string, fields: Record<string, unknown>): Operation {
    const op: Operation = {
      index: this.operations.length,
      process,
      kind,
      fields,
      outcome: 'invoke',
      start: this.#now(),
    };
    this.operations.push(op);
    return op;
  }

  ok(op: Operation, detail?: string): void {
    this.#complete(op, 'ok', detail);
  }

  fail(op: Operation, detail?: string): void {
    this.#complete(op, 'fail', detail);
  }

  info(op: Operation, detail?: string): void {
    this.#complete(op, 'info', detail);
  }

  #complete(op: Operation, outcome: Outcome, detail?: string): void {
    op.outcome = outcome;
    op.end = this.#now();
    if (detail !== undefined) op.detail = detail;
  }

  of(kind: string): Operation[] {
    return this.operations.filter((o) => o.kind === kind);
  }
}
