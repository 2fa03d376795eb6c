import { NotFoundError } from '../../errors.js';
import { nextLabelId } from '../ops/label-ops.js';
import type { ChatLabels, LabelInfo, LabelOps } from '../ops/label-ops.js';
import type { ConnectionManager } from './connection-manager.js';
import { toJid } from './jids.js';
import { refreshChatLabels } from './outgoing.js';

/** Labels through Baileys' app-state patches, kept in the session's label book (label-book.ts). */
export class BaileysLabels implements LabelOps {
  constructor(private readonly conn: ConnectionManager) {}

  async chats(refresh: boolean): Promise<ChatLabels[]> {
    if (!refresh) return (await this.conn.ensureLink()).labels.list();
    const sock = this.conn.socket();
    const { labels } = this.conn.link!;
    for (const { chatJid, labelId } of await refreshChatLabels(sock, labels)) {
      this.conn.emit({
        type: 'labels',
        chatJid,
        labels: [{ id: labelId, name: labels.nameOf(labelId) }],
        action: 'remove',
        timestamp: Date.now(),
      });
    }
    return labels.list();
  }

  async list(): Promise<LabelInfo[]> {
    return (await this.conn.ensureLink()).labels.labels();
  }

  async create(name: string, color: number): Promise<LabelInfo> {
    const sock = this.conn.socket();
    const { labels } = await this.conn.ensureLink();
    const id = nextLabelId(labels.labels());
    await sock.chatModify({ addLabel: { id, name, color, deleted: false } }, '');
    labels.edit(id, name, false);
    return { id, name };
  }

  async remove(labelId: string): Promise<void> {
    const sock = this.conn.socket();
    const { labels } = await this.conn.ensureLink();
    if (!labels.has(labelId)) throw new NotFoundError(`Label not found: ${labelId}`);
    const name = labels.nameOf(labelId);
    const carrying = labels.list().filter((c) => c.labels.some((l) => l.id === labelId));
    await sock.chatModify({ addLabel: { id: labelId, name, deleted: true } }, '');
    labels.edit(labelId, undefined, true);
    for (const chat of carrying) {
      this.conn.emit({
        type: 'labels',
        chatJid: chat.chatJid,
        labels: [{ id: labelId, name }],
        action: 'remove',
        timestamp: Date.now(),
      });
    }
  }

  async assign(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    const sock = this.conn.socket();
    const { labels } = await this.conn.ensureLink();
    const unknown = labelIds.find((id) => !labels.has(id));
    if (unknown !== undefined) throw new NotFoundError(`Label not found: ${unknown}`);
    const jid = toJid(chatJid);
    for (const id of labelIds) {
      // App-state patches: the phone and other devices see the change; the book is updated as Baileys
      // does not echo our own patches back as events.
      if (add) await sock.addChatLabel(jid, id);
      else await sock.removeChatLabel(jid, id);
      labels.associate(jid, id, add);
    }
    const after = labels.chat(jid);
    this.conn.emit({
      type: 'labels',
      chatJid: jid,
      labels: after.labels,
      action: add ? 'add' : 'remove',
      timestamp: Date.now(),
    });
    return after;
  }
}
