import type { ContactCard, EventDetails } from './msgnet-events.js';
import type { OutgoingMedia } from './outgoing-types.js';

// The message kinds a send carries beyond text, media and location, apart from msgnet-driver.ts so that
// the ops interfaces can use them.

export type Button =
  | { type: 'reply'; id: string; label: string }
  | { type: 'url'; url: string; label: string }
  | { type: 'call'; phoneNumber: string; label: string }
  | { type: 'copy'; code: string; label: string };

export interface ListRow {
  id: string;
  title: string;
  description?: string;
}

export interface ListSection {
  title: string;
  rows: ListRow[];
}

/** One card of a carousel; `M` is the media as it travels (bytes on the owner, base64 between nodes). */
export interface CarouselCard<M = OutgoingMedia> {
  title: string;
  subtitle?: string;
  /** An image or a video shown above the text. */
  media?: M;
  body: string;
  footer?: string;
  buttons: Button[];
}

/** A message of the chat history another message acts on (a reaction, an edit). */
export interface MessageRef {
  id: string;
  chatJid: string;
  fromMe: boolean;
  /** Its author in a group, when not us. */
  participant?: string;
}

/**
 * The message kinds beyond text, media and location, sent through `MessageOps.sendContent`. `M` is the
 * media as it travels: `OutgoingMedia` on the owner, base64 between nodes.
 */
export type MessageContent<M = OutgoingMedia> =
  | { kind: 'contacts'; contacts: ContactCard[] }
  | { kind: 'buttons'; text: string; header?: string; footer?: string; media?: M; buttons: Button[] }
  | { kind: 'list'; text: string; buttonText: string; header?: string; footer?: string; sections: ListSection[] }
  | { kind: 'carousel'; text?: string; footer?: string; cards: CarouselCard<M>[] }
  | { kind: 'poll'; question: string; options: string[]; maxAnswer: number }
  | { kind: 'pix'; payment: PixPayment }
  /** A native-flow form (WhatsApp Flows): a text with a button that opens the form. */
  | { kind: 'form'; form: FormMessage }
  | { kind: 'event'; event: EventDetails }
  /** The card of a scheduled call (`call.schedule`); an empty `joinLink` makes the driver create one. */
  | { kind: 'scheduledCall'; card: EventCard }
  | { kind: 'reaction'; target: MessageRef; emoji: string }
  | { kind: 'edit'; target: MessageRef; text: string }
  /** A message of the history sent again, marked as forwarded: its text, or its media with the caption. */
  | { kind: 'forward'; text: string; media?: M };

/** A native-flow form message: the flow's parameters as WhatsApp's `galaxy_message` button takes them. */
export interface FormMessage {
  text: string;
  footer?: string;
  /** The button's parameters (`flow_message_version`, `flow_token`, `flow_id`, `flow_cta`, …). */
  params: Record<string, unknown>;
  /** The native flow's version (`messageVersion`). */
  messageVersion: number;
}

export interface PixPayment {
  merchantName: string;
  key: string;
  keyType: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'RANDOM';
  /** A text shown on the card. */
  message?: string;
  /** What is being paid for: the card lists them and their total. */
  items?: PixItem[];
}

/** One line of a PIX card's order; `unitPrice` in reais (two decimals). */
export interface PixItem {
  name: string;
  description?: string;
  quantity: number;
  unitPrice: number;
}

/** A scheduled call as its card shows it (times in Unix seconds). */
export interface EventCard {
  name: string;
  description?: string;
  startTime: number;
  endTime?: number;
  video: boolean;
  reminderOffsetSec?: number;
  /** The call link the card carries. */
  joinLink: string;
}
