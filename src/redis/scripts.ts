import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './redis-client.js';

/**
 * Loads every script of lua/ into a client with `defineCommand`. A file is `<verbNoun>-<numKeys>.lua`;
 * `-var` means the caller passes the key count first. The command name carries a hash of the script, so
 * that nodes of two versions can share one Redis during a rolling upgrade.
 */

const LUA_DIR = join(dirname(fileURLToPath(import.meta.url)), 'lua');

interface Script {
  command: string;
  /** The key count the file name promises; undefined for `-var`. */
  numKeys: number | undefined;
  lua: string;
}

const SCRIPTS: ReadonlyMap<string, Script> = new Map(
  readdirSync(LUA_DIR)
    .filter((f) => f.endsWith('.lua'))
    .map((file) => {
      const match = /^([A-Za-z]+)-(\d+|var)\.lua$/.exec(file);
      if (!match?.[1] || !match[2]) throw new Error(`Lua file ${file} is not named <verbNoun>-<numKeys>.lua`);
      const lua = readFileSync(join(LUA_DIR, file), 'utf8');
      const hash = createHash('sha1').update(lua).digest('hex').slice(0, 8);
      return [
        match[1],
        { command: `${match[1]}:${hash}`, numKeys: match[2] === 'var' ? undefined : Number(match[2]), lua },
      ] as const;
    }),
);

type Command = (...args: (string | number)[]) => Promise<unknown>;

function ensureLoaded(client: RedisClient, script: Script): Command {
  const existing = (client as unknown as Record<string, Command | undefined>)[script.command];
  if (existing) return existing;
  // Defined without numberOfKeys: every call passes its key count first.
  client.defineCommand(script.command, { lua: script.lua });
  return (client as unknown as Record<string, Command>)[script.command]!;
}

/** Runs a script of lua/ by its base name (`renewLeases`), keys first. */
export function runScript<T>(client: RedisClient, base: string, keys: string[], args: (string | number)[]): Promise<T> {
  const script = SCRIPTS.get(base);
  if (!script) throw new Error(`No Lua script named ${base}`);
  if (script.numKeys !== undefined && keys.length !== script.numKeys) {
    throw new Error(`Lua script ${base} takes ${script.numKeys} keys, got ${keys.length}`);
  }
  const command = ensureLoaded(client, script);
  return command.call(client, keys.length, ...keys, ...args) as Promise<T>;
}
