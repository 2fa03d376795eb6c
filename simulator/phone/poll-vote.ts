import { createHash, randomBytes } from 'node:crypto';
import { aesEncryptGCM, hmacSign, proto } from '@whiskeysockets/baileys';

/**
 * Seals a poll vote as WhatsApp clients do (the inverse of Baileys' `decryptPollVote`): AES-GCM with a
 * key derived from the poll's secret and (poll id, creator, voter); options named by their SHA-256.
 */
export function encryptPollVote(input: {
  pollId: string;
  pollCreatorJid: string;
  voterJid: string;
  secret: Buffer;
  options: string[];
}): { encPayload: Buffer; encIv: Buffer } {
  const sign = Buffer.concat([
    Buffer.from(input.pollId),
    Buffer.from(input.pollCreatorJid),
    Buffer.from(input.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = hmacSign(input.secret, new Uint8Array(32), 'sha256');
  const key = hmacSign(sign, key0, 'sha256');
  const plain = proto.Message.PollVoteMessage.encode({
    selectedOptions: input.options.map((o) => createHash('sha256').update(o).digest()),
  }).finish();
  const encIv = randomBytes(12);
  const aad = Buffer.from(`${input.pollId}\u0000${input.voterJid}`);
  return { encPayload: aesEncryptGCM(plain, key, encIv, aad), encIv };
}
