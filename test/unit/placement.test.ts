import { expect } from 'chai';
import { PlacementMemo, nodeScore, placeInstance } from '../../src/cluster/placement.js';

const IDS = Array.from({ length: 20_000 }, (_, i) => `instance-${i.toString(36)}-${(i * 7919) % 10_007}`);
const THREE = ['node-a', 'node-b', 'node-c'];

function placeAll(nodes: readonly string[]): string[] {
  return IDS.map((id) => {
    const node = placeInstance(id, nodes);
    if (node === undefined) throw new Error(`no node for ${id}`);
    return node;
  });
}

function shares(placement: string[], nodes: readonly string[]): Map<string, number> {
  const counts = new Map(nodes.map((n) => [n, 0]));
  for (const n of placement) counts.set(n, (counts.get(n) ?? 0) + 1);
  return new Map([...counts].map(([n, c]) => [n, c / placement.length]));
}

describe('placeInstance (rendezvous hashing)', () => {
  const three = placeAll(THREE);

  it('is deterministic and independent of the order of the node list', () => {
    expect(placeAll(THREE)).to.deep.equal(three);
    expect(placeAll(['node-c', 'node-a', 'node-b'])).to.deep.equal(three);
    expect(placeAll([...THREE].reverse())).to.deep.equal(three);
  });

  it('spreads 20,000 ids over 3 nodes at 33% ± 3% each', () => {
    const s = shares(three, THREE);
    expect([...s.keys()].sort()).to.deep.equal(THREE);
    for (const [node, share] of s) expect(share, node).to.be.closeTo(1 / 3, 0.03);
  });

  it('moves about a quarter of the ids when a 4th node joins, all of them to the new node', () => {
    const four = placeAll([...THREE, 'node-d']);
    let moved = 0;
    four.forEach((node, i) => {
      if (node === three[i]) return;
      moved++;
      expect(node, `${IDS[i]} moved from ${three[i]}`).to.equal('node-d');
    });
    expect(moved / IDS.length).to.be.closeTo(0.25, 0.03);
    for (const [node, share] of shares(four, [...THREE, 'node-d'])) expect(share, node).to.be.closeTo(0.25, 0.03);
  });

  it('moves only the ids of a node that leaves', () => {
    const two = placeAll(['node-a', 'node-c']);
    let moved = 0;
    two.forEach((node, i) => {
      if (three[i] === 'node-b') {
        moved++;
        expect(node).to.be.oneOf(['node-a', 'node-c']);
      } else {
        expect(node, IDS[i]).to.equal(three[i]);
      }
    });
    expect(moved).to.equal(three.filter((n) => n === 'node-b').length);
    expect(moved).to.be.greaterThan(0);
  });

  it('places on the only node, and nowhere with no node', () => {
    expect(placeInstance('x', [])).to.equal(undefined);
    expect(placeInstance('x', ['solo'])).to.equal('solo');
    expect(IDS.slice(0, 100).every((id) => placeInstance(id, []) === undefined)).to.equal(true);
  });
});

/** The node second to an instance's over `nodes`, by placeInstance's rule. */
function runnerUp(id: string, nodes: readonly string[]): string | undefined {
  const first = placeInstance(id, nodes);
  return placeInstance(
    id,
    nodes.filter((n) => n !== first),
  );
}

/** Nodes joining and leaving at random (seeded): `toggle()` makes one of the pool join or leave, never the last. */
function churn(seed: number, start: string[]) {
  const pool = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let live = start;
  return {
    random,
    get live() {
      return live;
    },
    toggle() {
      const n = pool[Math.floor(random() * pool.length)]!;
      if (live.includes(n)) {
        if (live.length > 1) live = live.filter((x) => x !== n);
      } else live = [...live, n];
    },
  };
}

describe('PlacementMemo: placement remembered between reconcile passes', () => {
  it('hashes nothing when a node dies: its instances go to their runner-up', () => {
    let hashed = 0;
    const memo = new PlacementMemo((node, id) => {
      hashed++;
      return nodeScore(node, id);
    });
    const ids = IDS.slice(0, 1000);
    const five = ['n1', 'n2', 'n3', 'n4', 'n5'];
    ids.forEach(memo.pass(five));
    const afterFirst = hashed;
    const four = ['n1', 'n2', 'n3', 'n5'];
    const place = memo.pass(four);
    expect(ids.map(place)).to.deep.equal(ids.map((id) => placeInstance(id, four)));
    // Only the instances whose runner-up was the dead node are weighed again (four hashes each).
    const runnerUpN4 = ids.filter((id) => runnerUp(id, five) === 'n4').length;
    expect(hashed - afterFirst).to.equal(runnerUpN4 * 4);
  });

  it('answers as placeInstance through any sequence of nodes leaving and joining', () => {
    const ids = IDS.slice(0, 300);
    const memo = new PlacementMemo();
    const nodes = churn(42, ['n1', 'n2', 'n3']);
    for (let pass = 0; pass < 200; pass++) {
      const live = nodes.live;
      const place = memo.pass(live);
      expect(ids.map(place), `pass ${pass} over ${live.join(',')}`).to.deep.equal(
        ids.map((id) => placeInstance(id, live)),
      );
      // Each pass one or two nodes leave or join.
      for (let k = nodes.random() < 0.5 ? 1 : 2; k > 0; k--) nodes.toggle();
    }
  });

  it('keeps every answer right through passes that place only the instances of the nodes that left', () => {
    const ids = IDS.slice(0, 300);
    const memo = new PlacementMemo();
    const nodes = churn(7, ['n1', 'n2', 'n3', 'n4']);
    let onNode = new Map(ids.map((id) => [id, placeInstance(id, nodes.live)]));
    ids.forEach(memo.pass(nodes.live));
    for (let pass = 0; pass < 200; pass++) {
      const before = nodes.live;
      nodes.toggle();
      const live = nodes.live;
      const gone = before.filter((x) => !live.includes(x));
      if (gone.length && live.every((x) => before.includes(x))) {
        // As the reconciler's pass after a departure: the departed node's instances alone, the rest kept.
        const place = memo.pass(live, { keep: true });
        for (const id of ids) if (gone.includes(onNode.get(id)!)) onNode.set(id, place(id));
      } else {
        const place = memo.pass(live);
        onNode = new Map(ids.map((id) => [id, place(id)!]));
      }
      expect(
        ids.map((id) => onNode.get(id)),
        `pass ${pass} over ${live.join(',')}`,
      ).to.deep.equal(ids.map((id) => placeInstance(id, live)));
    }
  });

  it('answers as placeInstance; weighs an instance again only against nodes that joined, and places afresh only those of a node that left', () => {
    let hashed = 0;
    const memo = new PlacementMemo((node, id) => {
      hashed++;
      return nodeScore(node, id);
    });
    const ids = IDS.slice(0, 500);
    const first = memo.pass(THREE);
    expect(ids.map(first)).to.deep.equal(ids.map((id) => placeInstance(id, THREE)));
    expect(ids.map(first)).to.deep.equal(ids.map((id) => placeInstance(id, THREE)));
    expect(hashed).to.equal(500 * 3);
    // The same nodes in another order: nothing to hash again.
    const again = memo.pass([...THREE].reverse());
    ids.forEach((id) => again(id));
    expect(hashed).to.equal(500 * 3);
    // A node joins: each instance is weighed against it alone.
    const four = [...THREE, 'node-d'];
    const joined = memo.pass(four);
    expect(ids.map(joined)).to.deep.equal(ids.map((id) => placeInstance(id, four)));
    expect(hashed).to.equal(500 * 4);
    const onD = ids.filter((id) => placeInstance(id, four) === 'node-d').length;
    expect(onD).to.be.within(80, 170);
    // It leaves again: its instances go to their runner-up, unhashed; those whose runner-up it was are placed afresh.
    const runnerUpD = ids.filter((id) => runnerUp(id, four) === 'node-d').length;
    expect(runnerUpD).to.be.within(80, 170);
    const left = memo.pass(THREE);
    expect(ids.map(left)).to.deep.equal(ids.map((id) => placeInstance(id, THREE)));
    expect(hashed).to.equal(500 * 4 + runnerUpD * 3);
    // Another node leaves and two join at once: the same answers as placing from scratch.
    const mixed = ['node-a', 'node-c', 'node-e', 'node-f'];
    const changed = memo.pass(mixed);
    expect(ids.map(changed)).to.deep.equal(ids.map((id) => placeInstance(id, mixed)));
    // A pass that did not ask for an instance (deleted meanwhile) drops it: asked later, it is hashed again.
    const before = hashed;
    memo.pass(mixed)(ids[0]!);
    memo.pass(mixed)(ids[1]!);
    expect(hashed).to.equal(before + 4);
  });

  it('breaks an equal weight toward the smaller node id, as placeInstance does, whichever side joined', () => {
    const flat = () => 7n;
    const memo = new PlacementMemo(flat);
    expect(memo.pass(['node-b'])('x')).to.equal('node-b');
    expect(memo.pass(['node-b', 'node-a'])('x')).to.equal('node-a');
    expect(memo.pass(['node-a', 'node-c'])('x')).to.equal('node-a');
  });
});
