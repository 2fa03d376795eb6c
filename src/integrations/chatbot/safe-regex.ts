import { Script, createContext } from 'node:vm';
import { BoundedMap } from '../../util/bounded-map.js';

/**
 * Regex triggers run on every incoming message, so their time is bounded: refused shapes are kept out at
 * creation (instances/trigger-pattern.ts), and each test here runs in a VM context with a deadline that
 * interrupts even a backtracking match, on at most REGEX_INPUT_LIMIT characters of the message.
 */
export const REGEX_TIMEOUT_MS = 50;
export const REGEX_INPUT_LIMIT = 4096;
const CACHE_SIZE = 256;

const context = createContext({ pattern: /$^/, input: '' }) as { pattern: RegExp; input: string };
const script = new Script('pattern.test(input)');
const compiled = new BoundedMap<string, RegExp>(CACHE_SIZE);

function compile(pattern: string): RegExp | undefined {
  let re = compiled.get(pattern);
  if (re) return re;
  try {
    re = new RegExp(pattern, 'iu');
  } catch {
    return undefined;
  }
  compiled.set(pattern, re);
  return re;
}

/** Whether `pattern` matches `input` (case-insensitive); `timeout` when it ran out of time. */
export function matchesRegex(pattern: string, input: string): boolean | 'timeout' {
  const re = compile(pattern);
  if (!re) return false;
  context.pattern = re;
  context.input = input.slice(0, REGEX_INPUT_LIMIT);
  try {
    return script.runInContext(context, { timeout: REGEX_TIMEOUT_MS }) === true;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
    throw err;
  } finally {
    context.input = '';
  }
}
