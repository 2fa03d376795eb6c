import type { z } from 'zod';

/** One line naming the first problem of a zod parse, e.g. `field 'proxyPort': expected string`. */
export function describeIssue(error: z.ZodError, pathPrefix: string[] = []): string {
  const first = error.issues[0];
  if (!first) return 'invalid value';
  const issue = { ...first, path: [...pathPrefix, ...first.path] };
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? ` in '${issue.path.join('.')}'` : '';
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}${where}`;
  }
  const path = issue.path.join('.');
  const message = issue.message.replace(/^Invalid input: /, '');
  return path ? `field '${path}': ${message}` : message;
}

/** Plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
