import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Received } from './webhook-receiver.js';

/** How far a delivery's `webhook-timestamp` may be from the receiver's clock (the spec suggests 5 minutes). */
const TOLERANCE_S = 5 * 60;

/**
 * A receiver's check, as the Standard Webhooks specification describes it: the secret is the base64 after
 * `whsec_`; the signed content is `<webhook-id>.<webhook-timestamp>.<raw body>`; `webhook-signature` is a
 * space-separated list of `<version>,<base64 signature>`, and one `v1` entry must match (constant time).
 */
export function verifyStandardWebhook(r: Received, secret: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  const id = r.headers['webhook-id'];
  const timestamp = r.headers['webhook-timestamp'];
  const signatures = r.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) return false;
  if (!secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.raw}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
