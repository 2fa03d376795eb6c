import { expect } from 'chai';
import { bareReason, networkOperation } from '../../src/actors/network-operation.js';
import {
  AppError,
  ErrorCode,
  ForbiddenError,
  InternalError,
  NotConnectedError,
  TimeoutError,
  ValidationError,
} from '../../src/errors.js';

const failure = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (err: unknown) => err,
  )) as AppError;

describe('networkOperation: one rule for a network operation’s failures', () => {
  it('a typed error keeps its code: the client’s mistake, not connected, the network’s typed refusal, no answer', async () => {
    for (const err of [
      new ValidationError('bad'),
      new NotConnectedError(),
      new ForbiddenError('no'),
      new TimeoutError(),
    ]) {
      expect(await failure(networkOperation('Failed to x', () => Promise.reject(err)))).to.equal(err);
    }
  });

  it('the network’s untyped refusal becomes the endpoint’s documented failure: `<what>: <reason>`, or the bare reason', async () => {
    const named = await failure(
      networkOperation('failed to set profile name', () => Promise.reject(new Error('nope'))),
    );
    expect(named).to.be.instanceOf(InternalError);
    expect(named.message).to.equal('failed to set profile name: nope');
    const bare = await failure(networkOperation(bareReason, () => Promise.reject(new Error('call stanza refused'))));
    expect([bare.code, bare.message]).to.deep.equal([ErrorCode.Internal, 'call stanza refused']);
    const custom = await failure(
      networkOperation(
        (reason) => new AppError(ErrorCode.SendFailed, `Failed to send status: ${reason}`),
        () => Promise.reject(new Error('x')),
      ),
    );
    expect([custom.code, custom.message]).to.deep.equal([ErrorCode.SendFailed, 'Failed to send status: x']);
  });

  it('answers the result when the operation succeeds', async () => {
    expect(await networkOperation('Failed to x', async () => 42)).to.equal(42);
  });
});
