/**
 * What Redis serves while nodes idle, read from Redis's own INFO counters (commandstats, stats, cpu) before
 * and after a quiet window, summed over every server given (the masters and replicas of a cluster).
 */
import { connectRedis } from '../test/helpers/redis-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What Redis served per second over a quiet window (INFO commandstats and stats). */
export interface Traffic {
  commands: number;
  scripts: number;
  /** Mean time Redis spent in one script call, ms. */
  scriptMs: number;
  redisCpuPct: number;
  bytesIn: number;
  bytesOut: number;
  /** Calls per second of the busiest commands (those run inside a script counted too, as Redis counts them). */
  top: [string, number][];
}

/** Redis's counters: commands and script calls (with the time spent in scripts), its CPU, bytes in and out. */
interface Counters {
  calls: number;
  scripts: number;
  scriptUsec: number;
  cpuSeconds: number;
  inB: number;
  outB: number;
  byCommand: Map<string, number>;
}

async function counters(url: string): Promise<Counters> {
  const redis = await connectRedis(url);
  try {
    const commandstats = await redis.info('commandstats');
    const stats = await redis.info('stats');
    const cpu = await redis.info('cpu');
    let calls = 0;
    let scripts = 0;
    let scriptUsec = 0;
    const byCommand = new Map<string, number>();
    for (const m of commandstats.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)) {
      calls += Number(m[2]);
      byCommand.set(m[1]!, Number(m[2]));
      if (m[1] === 'evalsha' || m[1] === 'eval') {
        scripts += Number(m[2]);
        scriptUsec += Number(m[3]);
      }
    }
    const stat = (text: string, name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
    return {
      calls,
      scripts,
      scriptUsec,
      // The whole server process, as the kernel counts it (commandstats' µs count a script's inner commands twice).
      cpuSeconds: stat(cpu, 'used_cpu_user') + stat(cpu, 'used_cpu_sys'),
      inB: stat(stats, 'total_net_input_bytes'),
      outB: stat(stats, 'total_net_output_bytes'),
      byCommand,
    };
  } finally {
    redis.disconnect();
  }
}

/** The counters of several servers, added up. */
async function total(urls: string[]): Promise<Counters> {
  const all = await Promise.all(urls.map(counters));
  const byCommand = new Map<string, number>();
  for (const c of all) for (const [name, n] of c.byCommand) byCommand.set(name, (byCommand.get(name) ?? 0) + n);
  const sum = (pick: (c: Counters) => number) => all.reduce((s, c) => s + pick(c), 0);
  return {
    calls: sum((c) => c.calls),
    scripts: sum((c) => c.scripts),
    scriptUsec: sum((c) => c.scriptUsec),
    cpuSeconds: sum((c) => c.cpuSeconds),
    inB: sum((c) => c.inB),
    outB: sum((c) => c.outB),
    byCommand,
  };
}

/** Redis's traffic per second, over every server in `urls`, while the nodes idle for `windowMs`. */
export async function idleTraffic(urls: string[], windowMs: number): Promise<Traffic> {
  const before = await total(urls);
  await sleep(windowMs);
  const after = await total(urls);
  const perSecond = (n: number) => (n * 1000) / windowMs;
  const scripts = after.scripts - before.scripts;
  return {
    // Includes this bench's own few INFO calls between the two reads.
    commands: perSecond(after.calls - before.calls),
    scripts: perSecond(scripts),
    scriptMs: scripts === 0 ? 0 : (after.scriptUsec - before.scriptUsec) / scripts / 1000,
    redisCpuPct: perSecond(after.cpuSeconds - before.cpuSeconds) * 100,
    bytesIn: perSecond(after.inB - before.inB),
    bytesOut: perSecond(after.outB - before.outB),
    top: [...after.byCommand]
      .map(([name, n]): [string, number] => [name, perSecond(n - (before.byCommand.get(name) ?? 0))])
      .filter(([, rate]) => rate > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10),
  };
}
