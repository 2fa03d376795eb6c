import { z } from 'zod';
import { parseDuration } from './duration.js';

/**
 * How one environment variable's text becomes a value (`config.ts` builds its schema from these): the
 * typed value, a default or nothing when the variable is unset or empty, or a refusal that names it.
 */

/** `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`, any case. */
export const bool = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const v = value.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off'].includes(v)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false, got "${value}"` });
      return z.NEVER;
    });

/** An integer within [min, max]. */
export const int = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}, got "${value}"` });
        return z.NEVER;
      }
      return n;
    });

/** A number (decimals allowed) within [min, max]. */
export const decimal = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const n = Number(value);
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a number from ${min} to ${max}, got "${value}"` });
        return z.NEVER;
      }
      return n;
    });

/** A duration like `90s`, `24h`, `7d` or `1mo`. */
export const duration = (name: string, fallback: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      const d = parseDuration(value === undefined || value === '' ? fallback : value);
      if (!d) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a duration like 90s, 24h, 7d or 1mo, got "${value}"`,
        });
        return z.NEVER;
      }
      return d;
    });

/** Trimmed; empty or blank = unset. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** Comma-separated, trimmed, empty items dropped; unset = []. */
export const list = optionalString.transform((v) =>
  v === undefined
    ? []
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
);
