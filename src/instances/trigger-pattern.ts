/**
 * Regex triggers come from clients and run on every incoming message, so they are refused at creation
 * when they could backtrack catastrophically: too long, back-references, or a quantified group that
 * itself contains a quantifier (the classic `(a+)+` shape).
 */
const MAX_PATTERN_LENGTH = 256;

export function checkTriggerPattern(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `regex longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, 'iu');
  } catch (err) {
    return `invalid regex: ${(err as Error).message}`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return 'back-references are not allowed in regex triggers';
  if (/\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d+,\d*\})/.test(pattern)) {
    return 'nested quantifiers are not allowed in regex triggers';
  }
  return undefined;
}
