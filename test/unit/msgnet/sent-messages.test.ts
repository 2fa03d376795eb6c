import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import { BaileysAuth } from '../../../src/msgnet/baileys/baileys-auth-state.js';
import { NetworkAcks } from '../../../src/msgnet/baileys/network-acks.js';
import {
  SENT_HOUR_PREFIX,
  SENT_PREFIX,
  SENT_RETENTION_HOURS,
  SentMessages,
} from '../../../src/msgnet/baileys/sent-messages.js';
import { socketConfig } from '../../../src/msgnet/baileys/socket-config.js';
import { TtlCache } from '../../../src/msgnet/baileys/ttl-cache.js';
import { silentLog } from '../../helpers/baileys/baileys-harness.js';
import { MemoryAuthStore } from '../../helpers/baileys/memory-auth-store.js';
import { settle } from '../../helpers/manual-clock.js';

const HOUR_MS = 3_600_000;

const sent = (id: string, text: string): WAMessage => ({
  key: { remoteJid: '5511900000001@s.whatsapp.net', fromMe: true, id },
  message: { conversation: text },
});

describe("SentMessages: a session's sends, kept for the retry receipts another socket gets", () => {
  it("a new socket's getMessage (after a restart or a failover) finds what the old one sent", async () => {
    const store = new MemoryAuthStore();
    const before = await SentMessages.load(await BaileysAuth.load(store), silentLog);
    before.remember(sent('3EB0AAA', 'hello'));
    before.remember({
      key: { remoteJid: 'x@s.whatsapp.net', fromMe: false, id: '3EB0BBB' },
      message: { conversation: 'theirs' },
    });
    await settle();
    const auth = await BaileysAuth.load(store);
    const after = await SentMessages.load(auth, silentLog);
    const config = socketConfig({
      auth,
      log: silentLog,
      settings: {} as never,
      caches: {} as never,
      groupCache: new TtlCache({ ttlMs: 1000, maxEntries: 10 }),
      proxy: undefined,
      endpoint: undefined,
      acks: new NetworkAcks(silentLog),
      sent: after,
      historyDays: undefined,
      epoch: undefined,
      assertMayAct: undefined,
    });
    const found = await config.getMessage!({ remoteJid: '5511900000001@s.whatsapp.net', id: '3EB0AAA', fromMe: true });
    expect(found?.conversation).to.equal('hello');
    expect(await config.getMessage!({ id: '3EB0BBB' })).to.equal(undefined);
    expect(await config.getMessage!({ id: 'unknown' })).to.equal(undefined);
  });

  it('answers from memory before the write lands, and drops contents older than the retention on load', async () => {
    const store = new MemoryAuthStore();
    let now = 100 * HOUR_MS;
    const book = await SentMessages.load(await BaileysAuth.load(store), silentLog, () => now);
    book.remember(sent('OLD', 'old'));
    expect((await book.get({ id: 'OLD' }))?.conversation).to.equal('old');
    await settle();
    now += (SENT_RETENTION_HOURS - 1) * HOUR_MS;
    const later = await SentMessages.load(await BaileysAuth.load(store), silentLog, () => now);
    later.remember(sent('NEW', 'new'));
    await settle();
    expect((await later.get({ id: 'OLD' }))?.conversation).to.equal('old');
    now += 2 * HOUR_MS;
    const last = await SentMessages.load(await BaileysAuth.load(store), silentLog, () => now);
    expect(await last.get({ id: 'OLD' })).to.equal(undefined);
    expect((await last.get({ id: 'NEW' }))?.conversation).to.equal('new');
    expect(
      [...store.data.keys()].filter((k) => k.startsWith(SENT_PREFIX) || k.startsWith(SENT_HOUR_PREFIX)).sort(),
    ).to.deep.equal([`${SENT_HOUR_PREFIX}${100 + SENT_RETENTION_HOURS - 1}`, `${SENT_PREFIX}NEW`]);
  });
});
