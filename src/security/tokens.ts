import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new random token: 32 bytes, URL-safe. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Tokens are stored only as this hash, hex: SHA-256, computed once per request. They are high-entropy
 * random strings (or client-chosen instance tokens), so a plain SHA-256 is the right tool: a slow KDF would
 * only slow every request down. The one-shot `hash` (Node 20.12) with its default hex output is its
 * cheapest form: half of a Hash object's create, update and digest, and of bytes turned into hex after.
 */
export function hashToken(token: string): string {
  return hash('sha256', token);
}

/** Two token hashes (hex, as `hashToken` gives them) compared in constant time; `known` from `hashBytes`. */
export function sameHash(hashed: string, known: Buffer): boolean {
  const bytes = hashBytes(hashed);
  return bytes.length === known.length && timingSafeEqual(bytes, known);
}

/** A token hash as the bytes `sameHash` compares. */
export function hashBytes(hashed: string): Buffer {
  return Buffer.from(hashed, 'latin1');
}

/** Compares two secrets in constant time (over their SHA-256, so lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  return sameHash(hashToken(a), hashBytes(hashToken(b)));
}

/** A fixed prefix, bullets and the last 4 characters, as the spec shows secrets. */
export function maskSecret(secret: string, prefix = ''): string {
  return `${prefix}••••••••${secret.slice(-4)}`;
}

/** Shown in place of a secret that is set but never returned. */
export const SECRET_MASK = '••••••••';
