import { randomUUID } from 'node:crypto';
import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import { ValidationError } from '../../errors.js';
import type { Button, CarouselCard, FormMessage, ListSection, PixPayment } from '../msgnet-driver.js';
import { isGroupJid } from './jids.js';

/**
 * Hand-built messages for what Baileys has no helper for (buttons were removed upstream, #2239): the
 * protobuf content plus the extra stanza nodes `relayMessage` must carry.
 */
export interface RelayContent {
  message: proto.IMessage;
  additionalNodes: BinaryNode[];
}

export function nativeFlowButton(button: Button): { name: string; buttonParamsJson: string } {
  switch (button.type) {
    case 'reply':
      return { name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: button.label, id: button.id }) };
    case 'url':
      return {
        name: 'cta_url',
        buttonParamsJson: JSON.stringify({ display_text: button.label, url: button.url, merchant_url: button.url }),
      };
    case 'call':
      return {
        name: 'cta_call',
        buttonParamsJson: JSON.stringify({ display_text: button.label, phone_number: button.phoneNumber }),
      };
    case 'copy':
      return {
        name: 'cta_copy',
        buttonParamsJson: JSON.stringify({ display_text: button.label, copy_code: button.code }),
      };
  }
}

/** Without the `biz` node the server drops the message silently; the `bot` node is for 1:1 chats only (two nodes give 479 in groups). */
export function buttonsBizNodes(jid: string): BinaryNode[] {
  const biz: BinaryNode = {
    tag: 'biz',
    attrs: {},
    content: [
      {
        tag: 'interactive',
        attrs: { type: 'native_flow', v: '1' },
        content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }],
      },
    ],
  };
  return isGroupJid(jid) ? [biz] : [biz, { tag: 'bot', attrs: { biz_bot: '1' } }];
}

/** A header's media, uploaded already: an `imageMessage`, a `videoMessage` or a `documentMessage`. */
export type HeaderMedia = Pick<proto.IMessage, 'imageMessage' | 'videoMessage' | 'documentMessage'>;

/** A header with a title, a subtitle, media, or any of them; none gives no header. */
function headerOf(
  title: string | undefined,
  subtitle: string | undefined,
  media: HeaderMedia | undefined,
): proto.Message.InteractiveMessage.IHeader | undefined {
  if (!title && !subtitle && !media) return undefined;
  return {
    title: title ?? '',
    ...(subtitle ? { subtitle } : {}),
    hasMediaAttachment: !!media,
    ...media,
  };
}

/** An interactive message's text parts: the header only when there is one, the footer only when set. */
function framed(
  text: string,
  footer: string | undefined,
  header: proto.Message.InteractiveMessage.IHeader | undefined,
): proto.Message.IInteractiveMessage {
  return {
    ...(header ? { header } : {}),
    body: { text },
    ...(footer ? { footer: { text: footer } } : {}),
  };
}

/** Native-flow messages travel as view-once content with device-list metadata, as WhatsApp Web sends them. */
function nativeFlowRelay(jid: string, interactiveMessage: proto.Message.IInteractiveMessage): RelayContent {
  return {
    message: {
      viewOnceMessage: {
        message: {
          messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 },
          interactiveMessage,
        },
      },
    },
    additionalNodes: buttonsBizNodes(jid),
  };
}

/** A native-flow form: one `galaxy_message` button that opens the flow on the phone apps. */
export function formContent(jid: string, form: FormMessage): RelayContent {
  return nativeFlowRelay(jid, {
    ...framed(form.text, form.footer, undefined),
    nativeFlowMessage: {
      buttons: [{ name: 'galaxy_message', buttonParamsJson: JSON.stringify(form.params) }],
      messageVersion: form.messageVersion,
    },
  });
}

export interface ButtonsMessage {
  text: string;
  buttons: Button[];
  header?: string;
  footer?: string;
}

export function buttonsContent(jid: string, message: ButtonsMessage, media?: HeaderMedia): RelayContent {
  return nativeFlowRelay(jid, {
    ...framed(message.text, message.footer, headerOf(message.header, undefined, media)),
    nativeFlowMessage: { buttons: message.buttons.map(nativeFlowButton), messageParamsJson: '' },
  });
}

export interface ListMessage {
  text: string;
  /** The label of the button that opens the list. */
  buttonText: string;
  header?: string;
  footer?: string;
  sections: ListSection[];
}

/** A list is a native-flow `single_select`: its reply names the chosen row's id. */
export function listContent(jid: string, list: ListMessage): RelayContent {
  const params = {
    title: list.buttonText,
    sections: list.sections.map((section) => ({
      title: section.title,
      rows: section.rows.map((row) => ({
        id: row.id,
        title: row.title,
        ...(row.description ? { description: row.description } : {}),
      })),
    })),
  };
  return nativeFlowRelay(jid, {
    ...framed(list.text, list.footer, headerOf(list.header, undefined, undefined)),
    nativeFlowMessage: {
      buttons: [{ name: 'single_select', buttonParamsJson: JSON.stringify(params) }],
      messageParamsJson: '',
    },
  });
}

/** WhatsApp renders at most this many buttons on a carousel card. */
export const MAX_CARD_BUTTONS = 3;

/** A carousel card whose media (if any) is uploaded already. */
export type PreparedCard = Omit<CarouselCard, 'media'> & { media?: HeaderMedia };

export function carouselContent(
  jid: string,
  carousel: { text?: string; footer?: string; cards: PreparedCard[] },
): RelayContent {
  const cards = carousel.cards.map((card): proto.Message.IInteractiveMessage => {
    if (card.buttons.length > MAX_CARD_BUTTONS) {
      throw new ValidationError(`A carousel card has at most ${MAX_CARD_BUTTONS} buttons`);
    }
    return {
      ...framed(card.body, card.footer, headerOf(card.title, card.subtitle, card.media)),
      nativeFlowMessage: { buttons: card.buttons.map(nativeFlowButton), messageParamsJson: '' },
    };
  });
  return nativeFlowRelay(jid, {
    ...framed(carousel.text ?? '', carousel.footer, undefined),
    carouselMessage: { cards, messageVersion: 1 },
  });
}

/** The spec's RANDOM key is what WhatsApp calls EVP (a random "chave aleatória"). */
export function pixKeyType(keyType: PixPayment['keyType']): string {
  return keyType === 'RANDOM' ? 'EVP' : keyType;
}

export function paymentContent(
  payment: PixPayment,
  referenceId: string = randomUUID().replace(/-/g, '').slice(0, 12),
): RelayContent {
  // Amounts in centavos (WhatsApp's `value` with `offset: 100`).
  const items = (payment.items ?? []).map((item, i) => ({
    retailer_id: `item-${i + 1}`,
    name: item.name,
    ...(item.description ? { description: item.description } : {}),
    amount: { value: Math.round(item.unitPrice * 100), offset: 100 },
    quantity: item.quantity,
  }));
  const total = items.reduce((sum, item) => sum + item.amount.value * item.quantity, 0);
  const params = {
    currency: 'BRL',
    total_amount: { value: total, offset: 100 },
    reference_id: referenceId,
    type: 'physical-goods',
    order: {
      status: 'pending',
      subtotal: { value: total, offset: 100 },
      order_type: 'ORDER',
      items,
    },
    payment_settings: [
      {
        type: 'pix_static_code',
        pix_static_code: {
          merchant_name: payment.merchantName,
          key: payment.key,
          key_type: pixKeyType(payment.keyType),
        },
      },
    ],
    share_payment_status: false,
  };
  return {
    message: {
      interactiveMessage: {
        // The card shows the key and the merchant; a body keeps clients from rendering an empty bubble.
        body: { text: payment.message || payment.merchantName },
        nativeFlowMessage: { buttons: [{ name: 'payment_info', buttonParamsJson: JSON.stringify(params) }] },
      },
    },
    additionalNodes: [{ tag: 'biz', attrs: { native_flow_name: 'payment_info' } }],
  };
}
