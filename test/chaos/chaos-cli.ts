/**
 * `npm run chaos -- [--driver baileys|sandbox] [--duration 10m] [--seed N] [--nodes 3..5] [--fault-interval 3s] [--instances 4]
 * [--redis single|cluster|sentinel] [--keep-logs DIR]`: a randomized fault run over real processes (docs/operations.md, "Proof under faults"). Exits 1
 * when a checker finds an anomaly; the seed replays the same faults and operations. `--keep-logs` writes each node
 * process's output and the simulator's stanza log to DIR, to read an anomaly by.
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
    driver: { type: 'string', default: 'baileys' },
    duration: { type: 'string', default: '2m' },
    seed: { type: 'string' },
    nodes: { type: 'string', default: '3' },
    'fault-interval': { type: 'string', default: '3s' },
    instances: { type: 'string', default: '4' },
    workers: { type: 'string', default: '3' },
    'keep-logs': { type: 'string' },
    redis: { type: 'string', default: 'single' },
  },
});

const nodes = Number(values.nodes);
if (!Number.isInteger(nodes) || nodes < 3 || nodes > 5) throw new Error('--nodes must be 3, 4 or 5');
const driver = values.driver;
if (driver !== 'baileys' && driver !== 'sandbox') throw new Error('--driver must be baileys or sandbox');
const redis = values.redis;
if (redis !== 'single' && redis !== 'cluster' && redis !== 'sentinel') {
  throw new Error('--redis must be single, cluster or sentinel');
}
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const report = await runChaos({
  driver,
  durationMs: duration(values.duration, 'duration'),
  seed,
  nodes,
  faultIntervalMs: duration(values['fault-interval'], 'fault-interval'),
  instances: Number(values.instances),
  workers: Number(values.workers),
  quietMs: 6000,
  log: (line) => console.log(line),
  redis,
  ...(values['keep-logs'] ? { keepLogs: values['keep-logs'] } : {}),
});
console.log(report.summary);
process.exit(report.anomalies > 0 ? 1 : 0);
