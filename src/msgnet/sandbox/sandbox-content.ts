import type { MessageContent } from '../msgnet-driver.js';
import { outboxMedia } from './sandbox-phone.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';

/** How one outgoing kind is recorded in the outbox and what reaches the other number. */
export interface SandboxSend {
  /** The simulated faults that can fail it, in order. */
  operations: string[];
  entry: Omit<OutboxEntry, 'messageId' | 'timestamp' | 'to' | 'replyTo'>;
  wire: Omit<Extract<SandboxWire, { t: 'msg' }>, 't' | 'id' | 'from' | 'timestamp'>;
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

/**
 * A kind beyond text, media and location, as the sandbox carries it: the recipient sees it typed as a
 * phone would show it (an interactive message, a poll, a reaction…), with its content in `details`.
 */
export function sandboxSend(content: MessageContent): SandboxSend {
  switch (content.kind) {
    case 'contacts':
      return {
        operations: ['sendContent'],
        entry: { type: 'contact', contacts: content.contacts },
        wire: {
          text: content.contacts.map((c) => c.fullName).join(', '),
          kind: 'contact',
          details: { contacts: content.contacts },
        },
      };
    case 'buttons': {
      const media = content.media ? outboxMedia(content.media) : undefined;
      return {
        operations: media ? ['uploadMedia', 'sendContent'] : ['sendContent'],
        entry: {
          type: 'buttons',
          text: content.text,
          buttons: content.buttons,
          ...optional('header', content.header),
          ...optional('footer', content.footer),
          ...optional('media', media),
        },
        wire: { text: content.text, kind: 'interactive' },
      };
    }
    case 'list':
      return {
        operations: ['sendContent'],
        entry: {
          type: 'list',
          text: content.text,
          list: { buttonText: content.buttonText, sections: content.sections },
          ...optional('header', content.header),
          ...optional('footer', content.footer),
        },
        wire: { text: content.text, kind: 'interactive' },
      };
    case 'carousel': {
      const cards = content.cards.map(({ media, ...card }) => ({
        ...card,
        ...optional('media', media ? outboxMedia(media) : undefined),
      }));
      const text = content.text ?? content.cards[0]?.body ?? '';
      return {
        operations: cards.some((c) => c.media) ? ['uploadMedia', 'sendContent'] : ['sendContent'],
        entry: { type: 'carousel', text, carousel: cards, ...optional('footer', content.footer) },
        wire: { text, kind: 'interactive' },
      };
    }
    case 'poll': {
      const poll = { question: content.question, options: content.options, maxAnswer: content.maxAnswer };
      return {
        operations: ['sendContent'],
        entry: { type: 'poll', poll },
        wire: { text: content.question, kind: 'poll', details: { poll } },
      };
    }
    case 'pix':
      return {
        operations: ['sendContent'],
        entry: { type: 'payment', payment: content.payment },
        wire: { text: '', kind: 'payment' },
      };
    case 'form':
      return {
        operations: ['sendContent'],
        entry: {
          type: 'form',
          text: content.form.text,
          form: content.form,
          ...optional('footer', content.form.footer),
        },
        wire: { text: content.form.text, kind: 'interactive' },
      };
    case 'event':
      return {
        operations: ['sendContent'],
        entry: { type: 'event', event: content.event },
        wire: { text: content.event.name, kind: 'event', details: { event: content.event } },
      };
    case 'scheduledCall':
      return {
        operations: ['sendEventCard'],
        entry: { type: 'event', event: content.card },
        wire: { text: content.card.name },
      };
    case 'reaction': {
      const reaction = { messageId: content.target.id, emoji: content.emoji };
      return {
        operations: ['sendContent'],
        entry: { type: 'reaction', reaction },
        wire: { text: content.emoji, kind: 'reaction', details: { reaction } },
      };
    }
    case 'edit': {
      const edit = { messageId: content.target.id, text: content.text };
      return {
        operations: ['sendContent'],
        entry: { type: 'edit', edit },
        wire: { text: content.text, kind: 'edit', details: { edit } },
      };
    }
    case 'forward': {
      const media = content.media ? outboxMedia(content.media) : undefined;
      return {
        operations: media ? ['uploadMedia', 'sendContent'] : ['sendContent'],
        entry: { type: media ? 'media' : 'text', text: content.text, forwarded: true, ...optional('media', media) },
        wire: { text: content.text, details: { forwarded: true }, ...optional('media', media) },
      };
    }
  }
}
