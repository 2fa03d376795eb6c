import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Received } from './webhook-receiver.js';

/** What a receiver does: HMAC-SHA256 of the raw bytes with `secret`, compared in constant time. */
export function verifySignature(r: Received, secret: string): boolean {
  const header = r.headers['x-service-signature'];
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(Buffer.from(r.raw, 'utf8')).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
