import { AppError, InternalError, reasonOf } from '../errors.js';

/** What the network's untyped refusal becomes: the endpoint's documented failure. */
export type Refusal = (reason: string, cause: unknown) => AppError;

/** The common refusal: a 500 `<what>: <reason>` (`failed to set profile name: not-authorized`). */
export const failedTo =
  (what: string): Refusal =>
  (reason, cause) =>
    new InternalError(`${what}: ${reason}`, { cause });

/** The call endpoints' refusal: a 500 whose message is the bare reason (spec 7). */
export const bareReason: Refusal = (reason, cause) => new InternalError(reason, { cause });

/**
 * Runs one network operation on the owner, under the one rule for its failures: a typed error keeps its
 * code (a client's mistake the driver found is a 4xx; not connected, not an admin, no answer in time, a
 * store outage or a lost ownership are what they are), and anything else is the network refusing in its
 * own words, which `refused` turns into the endpoint's documented failure (a 5xx; a text `what` gives
 * `<what>: <reason>`).
 */
export async function networkOperation<T>(refused: string | Refusal, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw (typeof refused === 'string' ? failedTo(refused) : refused)(reasonOf(err), err);
  }
}
