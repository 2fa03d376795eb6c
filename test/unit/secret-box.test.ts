import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config/config.js';
import { KEY_FILE_NAME, resolveEncryptionKey } from '../../src/security/encryption-key.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { hashBytes, hashToken, maskSecret, safeEqual, sameHash } from '../../src/security/tokens.js';

describe('SecretBox', () => {
  const box = new SecretBox(Buffer.alloc(32, 1));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('proxy-password', 'p');
    expect(sealed).to.match(/^v1:/);
    expect(sealed).not.to.include('proxy-password');
    expect(box.open(sealed, 'p')).to.equal('proxy-password');
    expect(box.seal('proxy-password', 'p')).not.to.equal(sealed);
  });

  it('refuses a ciphertext moved to another purpose, a tampered one, or another key', () => {
    const sealed = box.seal('secret', 'a');
    expect(() => box.open(sealed, 'b')).to.throw();
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => box.open(`v1:${raw.toString('base64')}`, 'a')).to.throw();
    expect(() => new SecretBox(Buffer.alloc(32, 2)).open(sealed, 'a')).to.throw();
  });
});

describe('tokens', () => {
  it('hashes deterministically and compares in constant time', () => {
    expect(hashToken('x')).to.equal(hashToken('x')).and.to.have.length(64);
    expect(safeEqual('abc', 'abc')).to.equal(true);
    expect(safeEqual('abc', 'abcd')).to.equal(false);
  });

  it('stores the SHA-256 of a token as lower-case hex, and compares such hashes whole', () => {
    // The hash of "abc" from FIPS 180-2's examples: stored hashes keep this very form.
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(hashToken('abc')).to.equal(abc);
    expect(sameHash(hashToken('abc'), hashBytes(abc))).to.equal(true);
    expect(sameHash(hashToken('abd'), hashBytes(abc))).to.equal(false);
    expect(sameHash(abc.slice(0, 63), hashBytes(abc))).to.equal(false);
    expect(sameHash(abc.toUpperCase(), hashBytes(abc))).to.equal(false);
  });

  it('masks a secret as prefix, bullets and the last four characters', () => {
    expect(maskSecret('whsec_1234567890', 'whsec_')).to.equal('whsec_••••••••7890');
  });
});

describe('resolveEncryptionKey', () => {
  it('creates a 0600 key file on first embedded start and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-key-'));
    try {
      const config = loadConfig({ DATA_DIR: dir });
      const first = resolveEncryptionKey(config);
      expect(first.source).to.equal('file-created');
      expect(statSync(join(dir, KEY_FILE_NAME)).mode & 0o777).to.equal(0o600);
      const again = resolveEncryptionKey(config);
      expect(again.source).to.equal('file-existing');
      expect(again.key.equals(first.key)).to.equal(true);
      expect(readFileSync(join(dir, KEY_FILE_NAME), 'utf8').trim()).to.have.length(64);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prefers ENCRYPTION_KEY', () => {
    const r = resolveEncryptionKey(loadConfig({ ENCRYPTION_KEY: 'b'.repeat(64), DATA_DIR: '/nonexistent' }));
    expect(r.source).to.equal('env');
  });
});
