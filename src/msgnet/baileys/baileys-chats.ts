import type { AddressBookEntry } from '../ops/address-book.js';
import type { ChatOps, LastMessage, NumberCheck } from '../ops/chat-ops.js';
import type { ContactBook } from './contact-book.js';
import { digitsOf, toJid } from './jids.js';
import { refusing } from './network-refusal.js';
import { lookup } from './outgoing.js';
import type { BaileysSocket } from './socket-port.js';

/** WhatsApp's app-state actions name the chat's newest message (archive, clear); none is an empty range. */
function lastMessages(chatJid: string, last: LastMessage | undefined) {
  if (!last) return [];
  return [
    {
      key: {
        remoteJid: chatJid,
        id: last.id,
        fromMe: last.fromMe,
        ...(last.participant ? { participant: last.participant } : {}),
      },
      messageTimestamp: Math.floor(last.timestamp / 1000),
    },
  ];
}

/** Chat state through Baileys' app-state patches (`chatModify`), blocks and `onWhatsApp`. */
export class BaileysChats implements ChatOps {
  constructor(
    private readonly socket: () => BaileysSocket,
    /** The session's address book, loaded with its link. */
    private readonly book: () => Promise<ContactBook>,
  ) {}

  async contacts(): Promise<AddressBookEntry[]> {
    return (await this.book()).list();
  }

  async archive(chatJid: string, archive: boolean, last?: LastMessage): Promise<void> {
    const jid = toJid(chatJid);
    await refusing('archive the chat', () =>
      this.socket().chatModify({ archive, lastMessages: lastMessages(jid, last) }, jid),
    );
  }

  async pin(chatJid: string, pin: boolean): Promise<void> {
    await refusing('pin the chat', () => this.socket().chatModify({ pin }, toJid(chatJid)));
  }

  async mute(chatJid: string, until: number | null): Promise<void> {
    await refusing('mute the chat', () => this.socket().chatModify({ mute: until }, toJid(chatJid)));
  }

  async block(jid: string, block: boolean): Promise<void> {
    await refusing('block the contact', () => this.socket().updateBlockStatus(toJid(jid), block ? 'block' : 'unblock'));
  }

  async clear(chatJid: string, last?: LastMessage): Promise<void> {
    const jid = toJid(chatJid);
    await refusing('clear the chat', () =>
      this.socket().chatModify({ clear: true, lastMessages: lastMessages(jid, last) }, jid),
    );
  }

  async markUnread(chatJid: string, last?: LastMessage): Promise<void> {
    const jid = toJid(chatJid);
    await refusing('mark the chat unread', () =>
      this.socket().chatModify({ markRead: false, lastMessages: lastMessages(jid, last) }, jid),
    );
  }

  async deleteForMe(chatJid: string, message: LastMessage, deleteMedia: boolean): Promise<void> {
    const jid = toJid(chatJid);
    const key = {
      remoteJid: jid,
      id: message.id,
      fromMe: message.fromMe,
      ...(message.participant ? { participant: message.participant } : {}),
    };
    await refusing('delete the message', () =>
      this.socket().chatModify(
        { deleteForMe: { deleteMedia, key, timestamp: Math.floor(message.timestamp / 1000) } },
        jid,
      ),
    );
  }

  async star(chatJid: string, message: { id: string; fromMe: boolean }, star: boolean): Promise<void> {
    const jid = toJid(chatJid);
    await refusing('star the message', () =>
      this.socket().chatModify({ star: { messages: [{ id: message.id, fromMe: message.fromMe }], star } }, jid),
    );
  }

  async check(numbers: string[]): Promise<NumberCheck[]> {
    const sock = this.socket();
    // One query per number: Baileys' batch answer does not say which input each hit answers.
    return Promise.all(
      numbers.map(async (number) => {
        const hit = await refusing('look the number up', () =>
          lookup(sock, number.includes('@') ? number : digitsOf(number)),
        );
        return { number, exists: hit.found, jid: hit.found ? (hit.jid ?? null) : null };
      }),
    );
  }
}
