import type { StatusOps, StatusPost } from '../ops/status-ops.js';
import type { SentMessage } from '../outgoing-types.js';
import type { SandboxSender } from './sandbox-messages.js';
import type { SandboxNet } from './sandbox-net.js';
import { outboxMedia } from './sandbox-phone.js';

/** The phone's status posts: recorded in the outbox, and echoed back to the phone as WhatsApp does. */
export class SandboxStatus implements StatusOps {
  constructor(
    private readonly net: SandboxNet,
    private readonly sender: SandboxSender,
  ) {}

  async publish(post: StatusPost): Promise<SentMessage> {
    const me = this.net.me();
    if (post.media) this.net.failIf('uploadMedia');
    this.net.failIf('publishStatus');
    const media = post.media ? outboxMedia(post.media) : undefined;
    const entry = await this.net.record({
      to: 'status@broadcast',
      type: 'status',
      text: post.text,
      status: {
        type: post.type,
        ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}),
        ...(post.font !== undefined ? { font: post.font } : {}),
      },
      ...(media ? { media } : {}),
    });
    // WhatsApp echoes the phone's own status back to it, like any message it sends.
    this.sender.emit({
      type: 'message',
      message: {
        id: entry.messageId,
        fromMe: true,
        timestamp: entry.timestamp,
        chat: { jid: 'status@broadcast', type: 'status' },
        sender: { jid: me },
        type: media ? 'media' : 'text',
        text: post.text,
        ...(media ? { media } : {}),
      },
    });
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }
}
