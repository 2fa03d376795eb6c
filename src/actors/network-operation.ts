import { AppError, InternalError, reasonOf } from '../errors.js';

/**
 * Runs one network operation of the chat, group, channel and community calls. Typed refusals (not
 * connected, forbidden, not found, timeout, a 400 of the driver) reach the client as they are; anything
 * else is a 500 `<what>: <reason>`.
 */
export async function networkOperation<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new InternalError(`${what}: ${reasonOf(err)}`, { cause: err });
  }
}
