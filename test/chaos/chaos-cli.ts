/**
 * `npm run chaos -- [--duration 10m] [--seed N] [--nodes 3..5] [--fault-interval 3s] [--instances 4]`:
 * a randomized fault run over real processes (docs/operations.md, "Proof under faults"). Exits 1 when a
 * checker finds an anomaly; the seed replays the same faults and operations.
 */
import { parseArgs } from 'node:util';
import { runChaos } from './run-chaos.js';

function duration(raw: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw new Error(`--${name} must be a duration like 90s or 10m, got "${raw}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * unit);
}

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '2m' },
    seed: { type: 'string' },
    nodes: { type: 'string', default: '3' },
    'fault-interval': { type: 'string', default: '3s' },
    instances: { type: 'string', default: '4' },
    workers: { type: 'string', default: '3' },
  },
});

const nodes = Number(values.nodes);
if (!Number.isInteger(nodes) || nodes < 3 || nodes > 5) throw new Error('--nodes must be 3, 4 or 5');
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const report = await runChaos({
  durationMs: duration(values.duration, 'duration'),
  seed,
  nodes,
  faultIntervalMs: duration(values['fault-interval'], 'fault-interval'),
  instances: Number(values.instances),
  workers: Number(values.workers),
  quietMs: 6000,
  log: (line) => console.log(line),
});
console.log(report.summary);
process.exit(report.anomalies > 0 ? 1 : 0);
