import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../config/config.js';

export const KEY_FILE_NAME = 'encryption.key';

/**
 * The encryption key: ENCRYPTION_KEY when given; in embedded mode otherwise a key file in DATA_DIR,
 * created with mode 0600 on first start. Config already refused a missing key in cluster mode.
 */
export function resolveEncryptionKey(config: Config): {
  key: Buffer;
  source: 'env' | 'file-existing' | 'file-created';
} {
  if (config.encryptionKey) return { key: config.encryptionKey, source: 'env' };
  const path = join(config.dataDir, KEY_FILE_NAME);
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte hex key`);
    return { key, source: 'file-existing' };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  // 'wx' so that two processes starting at once cannot both write a different key.
  try {
    writeFileSync(path, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolveEncryptionKey(config);
    throw err;
  }
  chmodSync(path, 0o600);
  return { key, source: 'file-created' };
}
