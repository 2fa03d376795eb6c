import { expect } from 'chai';
import {
  AppError,
  DisconnectedError,
  ERROR_CODES,
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

  it('every error code has every column of its row: HTTP status, wire rebuild, idempotency treatment', () => {
    const columns = ['status', 'fromWire', 'idempotency'];
    expect(Object.keys(ERROR_CODES).sort()).to.deep.equal(Object.values(ErrorCode).sort());
    for (const code of Object.values(ErrorCode)) {
      const row = ERROR_CODES[code] as unknown as Record<string, unknown>;
      expect(Object.keys(row).sort(), code).to.deep.equal([...columns].sort());
      for (const column of columns) expect(row[column], `${code}.${column}`).to.not.equal(undefined);
      expect(row.status, code).to.be.within(400, 599);
      expect(['forget', 'keep'], code).to.include(row.idempotency);
      // A class rebuilt from the wire keeps the code it crossed with.
      const rebuilt = ERROR_CODES[code].fromWire?.('m', 'i1');
      if (rebuilt) expect(rebuilt.code, code).to.equal(code);
    }
  });

  it('"not connected" has one status, 400; the endpoints whose spec gives 503 answer `disconnected`', () => {
    expect(ERROR_CODES[ErrorCode.NotConnected].status).to.equal(400);
    expect(ERROR_CODES[ErrorCode.Disconnected].status).to.equal(503);
    expect(new DisconnectedError().message).to.equal(new NotConnectedError().message);
    expect(errorFromWire(ErrorCode.Disconnected, 'x', 'i1')).to.be.instanceOf(DisconnectedError);
  });
});
