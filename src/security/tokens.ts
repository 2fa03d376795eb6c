import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new random token: 32 bytes, URL-safe. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Tokens are stored only as this hash. They are high-entropy random strings (or client-chosen instance
 * tokens), so a plain SHA-256 is the right tool: a slow KDF would only slow every request down.
 */
export function hashToken(token: string): string {
  return tokenDigest(token).toString('hex');
}

/**
 * The SHA-256 of a token as bytes: hashed once per request, compared in constant time, stored as hex. The
 * one-shot `hash` (Node 20.12) costs half of a Hash object's create, update and digest.
 */
export function tokenDigest(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** Compares two secrets in constant time (over their SHA-256, so lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(tokenDigest(a), tokenDigest(b));
}

/** A fixed prefix, bullets and the last 4 characters, as the spec shows secrets. */
export function maskSecret(secret: string, prefix = ''): string {
  return `${prefix}••••••••${secret.slice(-4)}`;
}

/** Shown in place of a secret that is set but never returned. */
export const SECRET_MASK = '••••••••';
