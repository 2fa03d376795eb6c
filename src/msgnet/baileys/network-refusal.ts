import { ForbiddenError, NotFoundError, TimeoutError } from '../../errors.js';

/** Baileys raises the server's refusals as Boom errors carrying the IQ error code as the HTTP-like status. */
function statusOf(err: unknown): number | undefined {
  // An IQ error (Baileys' assertNodeErrorFree) carries its code as `data` itself, beside Boom's default 500.
  const iqCode = (err as { data?: unknown } | undefined)?.data;
  if (typeof iqCode === 'number') return iqCode;
  const boom = err as { output?: { statusCode?: unknown }; data?: { code?: unknown } } | undefined;
  const status = boom?.output?.statusCode ?? boom?.data?.code;
  return typeof status === 'number' ? status : typeof status === 'string' ? Number(status) : undefined;
}

/**
 * The network's answer as our typed errors: not allowed (401, 403: not an admin, not the owner) is a
 * ForbiddenError, 404 a NotFoundError, no answer in time (408, "Timed Out") a TimeoutError; anything
 * else stays as it is.
 */
export function networkRefusal(err: unknown, what: string): unknown {
  const status = statusOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (status === 401 || status === 403) return new ForbiddenError(`WhatsApp refused to ${what}: ${message}`);
  if (status === 404 || status === 406) return new NotFoundError(`WhatsApp does not know it: ${message}`);
  if (status === 408 || /timed out/i.test(message)) {
    return new TimeoutError(`WhatsApp did not answer in time (${what})`);
  }
  return err;
}

/** Runs one network operation, its refusal typed by `networkRefusal`. */
export async function refusing<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw networkRefusal(err, what);
  }
}
