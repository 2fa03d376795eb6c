import { expect } from 'chai';
import { mergeHandlers } from '../../src/actors/instance-actor.js';
import type { ActorContext } from '../../src/actors/instance-actor.js';

const describeHandler = async (ctx: ActorContext) => ({
  instanceId: ctx.instanceId,
  nodeId: ctx.nodeId,
  epoch: ctx.epoch,
  state: 'active' as const,
});

describe('mergeHandlers', () => {
  it('combines tables, each kind answered by the one table that has it', () => {
    const merged = mergeHandlers({ describe: describeHandler }, { 'probe.write': describeHandler }, {});
    expect(Object.keys(merged).sort()).to.deep.equal(['describe', 'probe.write']);
    expect(merged.describe).to.equal(describeHandler);
  });

  it('refuses a kind answered twice instead of letting one table replace the other', () => {
    expect(() => mergeHandlers({ describe: describeHandler }, { describe: describeHandler })).to.throw(
      "two handlers for the actor call 'describe'",
    );
  });
});
