/**
 * Two builds of the node side by side: the CPU time per request of each, in alternating rounds, so that a
 * change of the machine's speed hits both alike. For before/after figures of one change, steadier than
 * two runs of bench/http.ts.
 *
 *   npx tsx bench/http-ab.ts <a/dist/main.js> <b/dist/main.js> [rounds = 3] [paths = health,settings,describe] [connections = 16]
 *
 * Each argument is a built entry point (`npm run build` in a checkout of that revision; a checkout made
 * with `git worktree add` can link this one's node_modules). Both nodes run embedded, each with one
 * linked sandbox instance; a round runs every path for 3 s with 16 connections (or as given) on A then B (B then A in
 * odd rounds), after a 1 s warm-up of each. Printed per path: each round's CPU µs per request and the
 * median of each build, then the same for user-mode CPU alone (the process's own code: steadier where the
 * kernel's loopback work varies from run to run, as on a shared virtual machine). See bench/README.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeProcess } from '../test/cluster/node-process.js';
import { NO_LIMIT, linkedInstance, load, targetsOf } from './http-load.js';
import type { Target } from './http-load.js';
import { median, printTable } from './stats.js';

const [mainA, mainB] = [process.argv[2], process.argv[3]];
if (!mainA || !mainB) {
  process.stderr.write('usage: npx tsx bench/http-ab.ts <a/dist/main.js> <b/dist/main.js> [rounds] [paths]\n');
  process.exit(2);
}
const ROUNDS = Number(process.argv[4] ?? 3);
const PATHS = (process.argv[5] ?? 'health,settings,describe').split(',');
const SECONDS = 3;
const CONNECTIONS = Number(process.argv[6] ?? 16);

const PATH_OF: Record<string, number> = { health: 0, settings: 1, describe: 2 };

async function main(): Promise<void> {
  const dirs: string[] = [];
  const nodes: NodeProcess[] = [];
  try {
    const sides: Target[][] = [];
    for (const [i, builtMain] of [mainA!, mainB!].entries()) {
      const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-ab-'));
      dirs.push(dir);
      const node = await NodeProcess.start({
        nodeId: `build-${'AB'[i]}`,
        dataDir: dir,
        probeFile: join(dir, 'probe.jsonl'),
        env: { ...NO_LIMIT, TEST_PROBE_WRITE_MS: '0' },
        builtMain,
      });
      nodes.push(node);
      const all = targetsOf('AB'[i]!, node, await linkedInstance(node));
      sides.push(
        PATHS.map((p) => {
          const index = PATH_OF[p];
          if (index === undefined) throw new Error(`unknown path ${p} (health, settings or describe)`);
          return all[index]!;
        }),
      );
    }
    for (const side of sides) for (const t of side) await load(t, CONNECTIONS, 1);
    const cpu = PATHS.map(() => [[], []] as [number[], number[]]);
    const user = PATHS.map(() => [[], []] as [number[], number[]]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [p] of PATHS.entries()) {
        for (const s of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const run = await load(sides[s]![p]!, CONNECTIONS, SECONDS);
          if (run.errors > 0) throw new Error(`${run.target}: ${run.errors} failed requests`);
          if (run.cpuUs === undefined || run.userUs === undefined) {
            throw new Error('no /proc here: CPU time per request cannot be read');
          }
          cpu[p]![s]!.push(run.cpuUs);
          user[p]![s]!.push(run.userUs);
        }
      }
      process.stderr.write(`round ${round + 1} of ${ROUNDS} done\n`);
    }
    for (const [label, figures] of [
      ['CPU time', cpu],
      ['User-mode CPU time', user],
    ] as const) {
      printTable(
        ['path', 'A µs/req by round', 'B µs/req by round', 'A median', 'B median', 'B ÷ A'],
        PATHS.map((p, i) => {
          const [a, b] = figures[i]!;
          return [
            p,
            a.map((x) => x.toFixed(0)).join(' '),
            b.map((x) => x.toFixed(0)).join(' '),
            median(a).toFixed(0),
            median(b).toFixed(0),
            (median(b) / median(a)).toFixed(2),
          ];
        }),
        `${label} of the serving node per request, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} alternating rounds (A: ${mainA}, B: ${mainB})`,
      );
    }
  } finally {
    await Promise.all(nodes.map((n) => n.terminate().catch(() => undefined)));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
