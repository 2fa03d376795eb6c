import { createDecipheriv, createHash, createHmac } from 'node:crypto';
import { getMediaKeys } from '@whiskeysockets/baileys';
import type { MediaType } from '@whiskeysockets/baileys';

/**
 * Decrypts a downloaded media blob as a WhatsApp client does: AES-256-CBC with the keys derived from
 * the message's media key, after checking the 10-byte MAC that ends the blob.
 */
export async function decryptMedia(blob: Buffer, mediaKey: Uint8Array, type: MediaType): Promise<Buffer> {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, type);
  if (blob.length < 10 || !macKey) throw new Error('media blob too short, or no MAC key');
  const body = blob.subarray(0, blob.length - 10);
  const mac = blob.subarray(blob.length - 10);
  const expected = createHmac('sha256', macKey).update(iv).update(body).digest().subarray(0, 10);
  if (!expected.equals(mac)) throw new Error('media MAC mismatch');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  return Buffer.concat([decipher.update(body), decipher.final()]);
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
