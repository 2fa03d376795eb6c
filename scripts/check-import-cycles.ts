/**
 * Fails when modules under src/ import each other in a cycle. Type-only imports are left out: they are
 * erased at compile time and cannot create a runtime cycle. Run by `npm run lint`.
 */
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const configPath = ts.findConfigFile(root, (f) => ts.sys.fileExists(f), 'tsconfig.build.json')!;
const config = ts.parseJsonConfigFileContent(
  ts.readConfigFile(configPath, (f) => ts.sys.readFile(f)).config,
  ts.sys,
  root,
);
const program = ts.createProgram(config.fileNames, config.options);
const src = resolve(root, 'src');

/** Module → the project modules it imports at run time. */
const graph = new Map<string, string[]>();
for (const file of program.getSourceFiles()) {
  if (!file.fileName.startsWith(src)) continue;
  const deps: string[] = [];
  for (const stmt of file.statements) {
    const isImport = ts.isImportDeclaration(stmt) && !stmt.importClause?.isTypeOnly;
    const isExport = ts.isExportDeclaration(stmt) && !stmt.isTypeOnly && stmt.moduleSpecifier !== undefined;
    if (!isImport && !isExport) continue;
    const spec = (stmt.moduleSpecifier as ts.StringLiteral).text;
    const resolved = ts.resolveModuleName(spec, file.fileName, config.options, ts.sys).resolvedModule;
    if (resolved && !resolved.isExternalLibraryImport && resolved.resolvedFileName.startsWith(src)) {
      deps.push(resolved.resolvedFileName);
    }
  }
  graph.set(file.fileName, deps);
}

const cycles: string[][] = [];
const state = new Map<string, 'visiting' | 'done'>();
const stack: string[] = [];
function visit(node: string): void {
  state.set(node, 'visiting');
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (state.get(next) === 'visiting') cycles.push([...stack.slice(stack.indexOf(next)), next]);
    else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(node, 'done');
}
for (const node of graph.keys()) if (!state.has(node)) visit(node);

if (cycles.length) {
  for (const c of cycles) console.error(`import cycle: ${c.map((f) => relative(root, f)).join(' → ')}`);
  process.exit(1);
}
console.log(`no import cycles among ${graph.size} modules`);
