import { expect } from 'chai';
import {
  AppError,
  ErrorCode,
  FencedError,
  InternalError,
  NotConnectedError,
  NotOwnerError,
  TimeoutError,
  ValidationError,
  errorFromWire,
  isNotConnected,
  isOwnershipLoss,
} from '../../src/errors.js';
import { ConfigError } from '../../src/config/config.js';

describe('errors', () => {
  it('an error crossing the wire is rebuilt as its own class, with its code and message', () => {
    const invalid = errorFromWire(ErrorCode.InvalidInput, 'number is required', 'i1');
    expect(invalid).to.be.instanceOf(ValidationError);
    expect(invalid.message).to.equal('number is required');
    expect(errorFromWire(ErrorCode.Timeout, 'late', 'i1')).to.be.instanceOf(TimeoutError);
    const notOwner = errorFromWire(ErrorCode.NotOwner, 'whatever', 'i1');
    expect(notOwner).to.be.instanceOf(NotOwnerError);
    expect((notOwner as NotOwnerError).instanceId).to.equal('i1');
    expect(errorFromWire(ErrorCode.NotConnected, 'x', 'i1')).to.be.instanceOf(NotConnectedError);
  });

  it('a code without a class keeps a plain AppError; an unknown code is internal', () => {
    const failed = errorFromWire(ErrorCode.SendFailed, 'Failed to send status: boom', 'i1');
    expect(failed.constructor).to.equal(AppError);
    expect(failed.code).to.equal(ErrorCode.SendFailed);
    const strange = errorFromWire('no_such_code', 'odd', 'i1');
    expect(strange).to.be.instanceOf(InternalError);
    expect(strange.message).to.equal('odd');
  });

  it('one test for "not the owner any more", also for errors from another node', () => {
    expect(isOwnershipLoss(new NotOwnerError('i1'))).to.equal(true);
    expect(isOwnershipLoss(new FencedError('i1', 3))).to.equal(true);
    expect(isOwnershipLoss(errorFromWire(ErrorCode.Fenced, 'stale', 'i1'))).to.equal(true);
    expect(isOwnershipLoss(new TimeoutError())).to.equal(false);
    expect(isOwnershipLoss(new Error('not_owner'))).to.equal(false);
    expect(isNotConnected(errorFromWire(ErrorCode.NotConnected, 'x', 'i1'))).to.equal(true);
  });

  it("every error class's name is its own", () => {
    expect(new FencedError('i1', 2).name).to.equal('FencedError');
    expect(new ConfigError('bad').name).to.equal('ConfigError');
  });
});
