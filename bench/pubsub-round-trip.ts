/**
 * The floor under a routed call: a bare Redis pub/sub round trip between two processes (this one PUBLISHes
 * a call-sized message, a child process subscribed to it PUBLISHes it back), with nothing else on either
 * side. bench/routing.ts runs it on its own redis-server next to the routed calls, so that what routing
 * adds beyond the two Redis hops shows. Run as a script with `echo <redis url>`, it is that child.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { summary } from './stats.js';
import type { Summary } from './stats.js';

const PING = 'bench:pubsub:ping';
const PONG = 'bench:pubsub:pong';
/** About the size of a describe call on the wire (call id, nodes, instance id, kind, deadline). */
const MESSAGE_BYTES = 200;

/** The child: answers every ping with the same message. */
async function echo(url: string): Promise<void> {
  const sub = new Redis(url);
  const pub = new Redis(url);
  sub.on('messageBuffer', (_channel: Buffer, message: Buffer) => void pub.publish(PONG, message));
  await sub.subscribe(PING);
  process.send?.('ready');
  process.on('disconnect', () => {
    sub.disconnect();
    pub.disconnect();
  });
}

/**
 * `count` round trips after `warmup` unmeasured ones, `inFlight` at a time, each message numbered so that
 * its answer is matched; latency in milliseconds.
 */
export async function pubsubRoundTrip(url: string, inFlight: number, count: number, warmup = 200): Promise<Summary> {
  const child = fork(fileURLToPath(import.meta.url), ['echo', url], { execArgv: ['--import', 'tsx'] });
  const sub = new Redis(url);
  const pub = new Redis(url);
  try {
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`pub/sub echo exited with ${code}`)));
    });
    const waiting = new Map<number, () => void>();
    sub.on('message', (_channel: string, message: string) => waiting.get(Number(message.slice(0, 12)))?.());
    await sub.subscribe(PONG);
    const padding = 'x'.repeat(MESSAGE_BYTES - 12);
    const samples: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < warmup + count) {
        const n = next++;
        const started = performance.now();
        await new Promise<void>((resolve) => {
          waiting.set(n, resolve);
          void pub.publish(PING, String(n).padStart(12, '0') + padding);
        });
        waiting.delete(n);
        if (n >= warmup) samples.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return summary(samples);
  } finally {
    child.disconnect();
    sub.disconnect();
    pub.disconnect();
  }
}

if (process.argv[2] === 'echo' && process.argv[3]) await echo(process.argv[3]);
