import { nextLabelId } from '../ops/label-ops.js';
import type { ChatLabels, LabelInfo, LabelOps } from '../ops/label-ops.js';
import type { SandboxNet } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

/** The Business phone's labels, as the session stored them from label events (`labels:<chat>`, `labelname:<id>`). */
export class SandboxLabels implements LabelOps {
  constructor(private readonly net: SandboxNet) {}

  /** What the session stored; a refresh asks the network again, so it needs the connection. */
  async chats(refresh = false): Promise<ChatLabels[]> {
    if (refresh) {
      this.net.me();
      this.net.failIf('chatLabels');
    }
    return this.net.phone.chatLabels();
  }

  async list(): Promise<LabelInfo[]> {
    return this.net.phone.labels();
  }

  async create(name: string): Promise<LabelInfo> {
    this.net.me();
    this.net.failIf('labels:create');
    const id = nextLabelId(await this.net.phone.labels());
    await this.net.phone.defineLabel(id, name);
    return { id, name };
  }

  async remove(labelId: string): Promise<void> {
    this.net.me();
    this.net.failIf('labels:delete');
    const removedFrom = await this.net.phone.deleteLabel(labelId);
    for (const { chatJid, label } of removedFrom) {
      this.net.emit({ type: 'labels', chatJid, labels: [label], action: 'remove', timestamp: Date.now() });
    }
  }

  async assign(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    this.net.me();
    const jid = toJid(chatJid);
    const { after, changed } = await this.net.phone.assignLabels(jid, labelIds, add);
    if (changed.length) {
      this.net.emit({
        type: 'labels',
        chatJid: jid,
        labels: changed,
        action: add ? 'add' : 'remove',
        timestamp: Date.now(),
      });
    }
    return { chatJid: jid, labels: after };
  }
}
