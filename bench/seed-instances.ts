/**
 * Many sandbox instances for a cluster bench, without a burst the nodes would refuse: the account and the
 * instances are created straight in the fixture's shared store (`ClusterFixture.createInstances`), then
 * each is linked through the nodes in turn (which makes it runnable), at most `concurrency` links at a
 * time. ClusterFixture.seed() links all at once, right for tests of a few dozen, wrong for tens of thousands.
 */
import { sleep } from '../test/cluster/cluster-fixture.js';
import type { ClusterFixture } from '../test/cluster/cluster-fixture.js';

export interface SeedOptions {
  concurrency: number;
  /** Progress, every `every` links. */
  onLinked?: (done: number) => void;
  every?: number;
}

/** Creates and links `count` instances; answers their ids (also kept as `fixture.instanceIds`). */
export async function seedInstances(fixture: ClusterFixture, count: number, options: SeedOptions): Promise<string[]> {
  const created = await fixture.createInstances(count);
  let next = 0;
  let done = 0;
  let retried = 0;
  let mostTries = 1;
  const worker = async () => {
    for (let i = next++; i < created.length; i = next++) {
      // A 503 says "try again" (the instance is moving between nodes while the links place it), and a kept-alive
      // connection the node closed as it was reused (EPIPE, reset) never reached it: a client retries both.
      for (let attempt = 1; ; attempt++) {
        const res = await fixture
          .probe(fixture.nodes[i % fixture.nodes.length]!, created[i]!.name, 'link')
          .catch((err: unknown) => ({ status: 0, text: String((err as Error).cause ?? err) }));
        if (res.status === 200) break;
        if ((res.status !== 503 && res.status !== 0) || attempt === 20) {
          throw new Error(`link of ${created[i]!.name} failed: ${res.status} ${res.text}`);
        }
        retried++;
        mostTries = Math.max(mostTries, attempt + 1);
        await sleep(Math.min(200 * attempt, 2000));
      }
      done++;
      if (options.onLinked && done % (options.every ?? 1000) === 0) options.onLinked(done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  if (retried) {
    console.log(
      `links answered 503 (moving between nodes) and tried again: ${retried}; most tries of one link: ${mostTries}`,
    );
  }
  fixture.instanceIds = created.map((x) => x.id);
  return fixture.instanceIds;
}
