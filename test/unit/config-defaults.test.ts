import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import ts from 'typescript';
import { DEFAULT_BILLING_CRON, ENV_OPTIONS, envDefaults, loadConfig } from '../../src/config/config.js';
import { parseDuration } from '../../src/config/duration.js';
import type { Duration } from '../../src/config/duration.js';

// The defaults are stated once, in config.ts's schema; the README's table and the TSDoc `@default` tags
// repeat them for readers, and these tests keep the copies true.

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

const isDuration = (v: unknown): v is Duration =>
  typeof v === 'object' && v !== null && 'months' in v && 'ms' in v && Object.keys(v).length === 2;

/** A default as a reader sees it agrees with the value: the same text, or the same duration. */
function agrees(text: string, value: unknown): boolean {
  if (value === undefined) return /^unset\b/.test(text);
  if (isDuration(value)) {
    const parsed = parseDuration(text.split(' ')[0]!);
    return parsed !== undefined && parsed.months === value.months && parsed.ms === value.ms;
  }
  const shown =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);
  return text === shown || text.startsWith(`${shown} `);
}

/** The README's configuration table: each variable with the text of its Default column. */
function readmeDefaults(): Map<string, string> {
  const lines = read('README.md').split('\n');
  const start = lines.findIndex((l) => /^\| Variable \| Default \| Meaning \|$/.test(l));
  expect(start, 'the README has its configuration table').to.be.above(-1);
  const rows = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [names, defaults] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
    const vars = [...names!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!);
    // `A`, `B` | `1`, `2`: one default per variable, in order; otherwise one for all.
    const cells = vars.length > 1 && defaults!.split(', ').length === vars.length ? defaults!.split(', ') : undefined;
    vars.forEach((v, i) => rows.set(v, (cells ? cells[i]! : defaults!).replace(/`/g, '').trim()));
  }
  return rows;
}

interface DocDefault {
  /** The property's path in the loaded Config (`webhooks.maxAttempts`). */
  path: string;
  text: string;
}

/** Every `@default` of `interfaceName` in `file`, following the properties typed by interfaces of the same file. */
function docDefaults(file: string, interfaceName: string): DocDefault[] {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const found: DocDefault[] = [];
  const walk = (members: ts.NodeArray<ts.TypeElement>, prefix: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      const path = prefix + member.name.text;
      for (const tag of ts.getJSDocTags(member)) {
        if (tag.tagName.text === 'default') found.push({ path, text: ts.getTextOfJSDocComment(tag.comment)!.trim() });
      }
      const type = member.type;
      if (type && ts.isTypeLiteralNode(type)) walk(type.members, `${path}.`);
      if (type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
        const nested = interfaces.get(type.typeName.text);
        if (nested) walk(nested.members, `${path}.`);
      }
    }
  };
  walk(interfaces.get(interfaceName)!.members, '');
  return found;
}

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);

describe("configuration defaults: stated once in config.ts's schema, repeated truthfully", () => {
  const env = envDefaults();

  it("the README's table names every variable once, with the schema's default", () => {
    const readme = readmeDefaults();
    expect([...readme.keys()].sort()).to.deep.equal([...ENV_OPTIONS].sort());
    // Defaults that the schema leaves unset and loadConfig derives, as the README words them.
    const derived: Record<string, (cell: string) => boolean> = {
      HOST: (cell) =>
        cell === '127.0.0.1 embedded, 0.0.0.0 cluster' &&
        loadConfig({}).host === '127.0.0.1' &&
        loadConfig({ REDIS_URL: 'redis://127.0.0.1:1', ENCRYPTION_KEY: 'a'.repeat(64) }).host === '0.0.0.0',
      BILLING_CRON: (cell) => cell === DEFAULT_BILLING_CRON && loadConfig({}).billing.cron === DEFAULT_BILLING_CRON,
      PUBLIC_BASE_URL: (cell) => cell === 'derived',
      NODE_ID: (cell) => cell === 'random',
    };
    for (const [name, cell] of readme) {
      const value = env[name];
      const ok = derived[name]
        ? derived[name](cell)
        : Array.isArray(value)
          ? value.length === 0 && ['unset', 'empty'].includes(cell)
          : agrees(cell, value);
      expect(ok, `README default of ${name}: "${cell}", the schema's: ${JSON.stringify(value)}`).to.equal(true);
    }
  });

  it('every @default of Config is the value loadConfig gives with an empty environment', () => {
    const config = loadConfig({});
    const defaults = docDefaults('src/config/config.ts', 'Config');
    expect(defaults.length).to.be.above(40);
    for (const { path, text } of defaults) {
      const value = at(config, path);
      expect(agrees(text, value), `Config.${path}: @default ${text}, loadConfig: ${JSON.stringify(value)}`).to.equal(
        true,
      );
    }
  });

  it("the options interfaces that restate a configuration default state the configuration's", () => {
    const config = loadConfig({});
    const restated: [file: string, iface: string, property: string, configPath: string][] = [
      ['src/events/webhooks/retry-policy.ts', 'RetryPolicy', 'maxAttempts', 'webhooks.maxAttempts'],
      ['src/events/webhooks/retry-policy.ts', 'RetryPolicy', 'baseDelayMs', 'webhooks.retryBaseMs'],
      ['src/events/webhooks/retry-policy.ts', 'RetryPolicy', 'maxDelayMs', 'webhooks.retryMaxMs'],
      ['src/cluster/actor-host.ts', 'ActorHostOptions', 'maxQueue', 'cluster.actorMaxQueue'],
      ['src/cluster/actor-host.ts', 'ActorHostOptions', 'drainTimeoutMs', 'cluster.drainTimeoutMs'],
      ['src/actors/instance-actor.ts', 'InstanceActorOptions', 'maxQueue', 'cluster.actorMaxQueue'],
    ];
    for (const [file, iface, property, configPath] of restated) {
      const doc = docDefaults(file, iface).find((d) => d.path === property);
      expect(doc, `${iface}.${property} has a @default`).to.not.equal(undefined);
      expect(agrees(doc!.text, at(config, configPath)), `${iface}.${property}: @default ${doc!.text}`).to.equal(true);
    }
  });
});
