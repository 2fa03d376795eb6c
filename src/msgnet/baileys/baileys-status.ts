import type { StatusOps, StatusPost } from '../ops/status-ops.js';
import type { SentMessage } from '../outgoing-types.js';
import type { ConnectionManager } from './connection-manager.js';
import * as out from './outgoing.js';

/** Status posts through Baileys, sent to the audience the session keeps (who may see our statuses). */
export class BaileysStatus implements StatusOps {
  constructor(private readonly conn: ConnectionManager) {}

  async publish(post: StatusPost): Promise<SentMessage> {
    const sock = this.conn.socket();
    return out.publishStatus(sock, post, this.conn.link!.audience.recipients(out.ownJid(sock)));
  }
}
