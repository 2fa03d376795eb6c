/**
 * Where a process's CPU time goes, by module: a sampling profile of this process (node:inspector), its
 * self time summed per source. This checkout's code is named by its path (a build's by its file under
 * dist/), a package by its name, Node's own code by its module, native frames (the garbage collector, a
 * digest) by their name.
 */
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Runs `work` under the sampling profiler (50 µs interval) and adds its self time, in µs per module, to
 * `totals` (so that alternating runs can be summed).
 */
export async function selfTimeByModule(work: () => Promise<void>, totals = new Map<string, number>()) {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
    await work();
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
    addBySource(profile, totals);
    return totals;
  } finally {
    session.disconnect();
  }
}

function addBySource(profile: Profile, totals: Map<string, number>): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const { functionName, url } = nodes.get(id)!.callFrame;
    if (functionName === '(idle)') return;
    const source = sourceOf(functionName, url);
    // A sample's time is the delta to the next one.
    totals.set(source, (totals.get(source) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
}

/** This checkout's files, named from its root. */
const PROJECT = `${pathToFileURL(process.cwd()).href}/`;

function sourceOf(functionName: string, url: string): string {
  if (url === '') return functionName;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const packaged = url.split('/node_modules/').at(-1)!;
  if (packaged !== url) {
    const [scope, name] = packaged.split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  if (url.startsWith(PROJECT)) return url.slice(PROJECT.length);
  const built = url.split('/dist/').at(-1)!;
  return built !== url ? `dist/${built}` : url;
}
