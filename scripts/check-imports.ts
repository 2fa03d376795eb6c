/**
 * The import rules of src/, run by `npm run lint`. Type-only imports count like any other: a type that
 * crosses a layer upwards couples the code as much as a value does.
 *
 * 1. Layers: a module imports from its own folder or from a folder of a lower layer, never sideways or up.
 * 2. No cycles between modules, not even inside one folder.
 * 3. The WhatsApp simulator (simulator/) is a server of its own: it imports nothing of src/, and src/
 *    nothing of it (tests and benches bring the two together).
 */
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Lowest first. A folder of src/ (or a top-level file, without `.ts`) sits in exactly one layer. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'validation', 'util'],
  ['config'],
  ['security', 'redis', 'metrics'],
  ['transport'],
  ['store'],
  ['msgnet'],
  ['media'],
  ['events'],
  ['actors'],
  ['cluster'],
  ['accounts', 'billing', 'instances'],
  ['integrations'],
  ['http'],
  ['node', 'cli'],
  ['main'],
];

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const configPath = ts.findConfigFile(root, (f) => ts.sys.fileExists(f), 'tsconfig.build.json')!;
const config = ts.parseJsonConfigFileContent(
  ts.readConfigFile(configPath, (f) => ts.sys.readFile(f)).config,
  ts.sys,
  root,
);
const program = ts.createProgram(config.fileNames, config.options);
const src = resolve(root, 'src');
const rank = new Map(LAYERS.flatMap((layer, i) => layer.map((folder) => [folder, i] as const)));
const folderOf = (file: string) => relative(src, file).split('/')[0]!.replace(/\.ts$/, '');
const problems: string[] = [];

/** Module → the project modules it imports (values and types). */
const graph = new Map<string, string[]>();
for (const file of program.getSourceFiles()) {
  if (!file.fileName.startsWith(src)) continue;
  const deps: string[] = [];
  for (const stmt of file.statements) {
    const isImport = ts.isImportDeclaration(stmt);
    const isExport = ts.isExportDeclaration(stmt) && stmt.moduleSpecifier !== undefined;
    if (!isImport && !isExport) continue;
    const spec = (stmt.moduleSpecifier as ts.StringLiteral).text;
    const resolved = ts.resolveModuleName(spec, file.fileName, config.options, ts.sys).resolvedModule;
    if (resolved && !resolved.isExternalLibraryImport && resolved.resolvedFileName.startsWith(src)) {
      deps.push(resolved.resolvedFileName);
    }
  }
  graph.set(file.fileName, deps);
}

for (const [file, deps] of graph) {
  const from = folderOf(file);
  if (!rank.has(from)) problems.push(`${relative(root, file)}: src/${from} is in no layer of scripts/check-imports.ts`);
  for (const dep of deps) {
    const to = folderOf(dep);
    if (to === from || !rank.has(from) || !rank.has(to)) continue;
    if (rank.get(to)! >= rank.get(from)!) {
      problems.push(`layer: ${relative(root, file)} imports ${relative(root, dep)} (${from} may not import ${to})`);
    }
  }
}

/** Relative imports of every .ts file under `dir` that reach into `forbidden`. */
function crossings(dir: string, forbidden: string): string[] {
  const found: string[] = [];
  for (const file of ts.sys.readDirectory(dir, ['.ts'])) {
    const text = ts.sys.readFile(file) ?? '';
    for (const match of text.matchAll(/from\s+'(\.[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]!);
      if (target.startsWith(forbidden + '/')) found.push(`${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  return found;
}
const simulator = resolve(root, 'simulator');
for (const c of crossings(simulator, src)) problems.push(`simulator: ${c} (the simulator imports nothing of src/)`);
for (const c of crossings(src, simulator)) problems.push(`simulator: ${c} (src/ imports nothing of the simulator)`);

const state = new Map<string, 'visiting' | 'done'>();
const stack: string[] = [];
function visit(node: string): void {
  state.set(node, 'visiting');
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (state.get(next) === 'visiting') {
      const cycle = [...stack.slice(stack.indexOf(next)), next];
      problems.push(`import cycle: ${cycle.map((f) => relative(root, f)).join(' → ')}`);
    } else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(node, 'done');
}
for (const node of graph.keys()) if (!state.has(node)) visit(node);

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`imports follow the ${LAYERS.length} layers, with no cycle, among ${graph.size} modules`);
