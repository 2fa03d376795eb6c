import { randomBytes, randomUUID } from 'node:crypto';
import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import type { Button, EventCard, PixPayment } from '../msgnet-driver.js';
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

export function buttonsContent(jid: string, text: string, buttons: Button[]): RelayContent {
  return {
    message: {
      viewOnceMessage: {
        message: {
          messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 },
          interactiveMessage: {
            body: { text },
            nativeFlowMessage: { buttons: buttons.map(nativeFlowButton), messageParamsJson: '' },
          },
        },
      },
    },
    additionalNodes: buttonsBizNodes(jid),
  };
}

/** The spec's RANDOM key is what WhatsApp calls EVP (a random "chave aleatória"). */
export function pixKeyType(keyType: PixPayment['keyType']): string {
  return keyType === 'RANDOM' ? 'EVP' : keyType;
}

export function paymentContent(
  payment: PixPayment,
  referenceId: string = randomUUID().replace(/-/g, '').slice(0, 12),
): RelayContent {
  const params = {
    currency: 'BRL',
    total_amount: { value: 0, offset: 100 },
    reference_id: referenceId,
    type: 'physical-goods',
    order: {
      status: 'pending',
      subtotal: { value: 0, offset: 100 },
      order_type: 'ORDER',
      items: [],
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
        body: { text: payment.merchantName },
        nativeFlowMessage: { buttons: [{ name: 'payment_info', buttonParamsJson: JSON.stringify(params) }] },
      },
    },
    additionalNodes: [{ tag: 'biz', attrs: { native_flow_name: 'payment_info' } }],
  };
}

/**
 * A scheduled-call card. Baileys' own `{event}` content would create a call link we never see, so the
 * message is built here around the link we return; the `meta` node is what Baileys adds for events.
 */
export function eventCardContent(card: EventCard): RelayContent {
  const startTime = Math.floor(card.startTime);
  const endTime = card.endTime ? Math.floor(card.endTime) : undefined;
  const hasReminder = card.reminderOffsetSec !== undefined && card.reminderOffsetSec > 0;
  return {
    message: {
      messageContextInfo: { messageSecret: randomBytes(32) },
      eventMessage: {
        name: card.name,
        ...(card.description ? { description: card.description } : {}),
        joinLink: card.joinLink,
        startTime,
        ...(endTime ? { endTime } : {}),
        isCanceled: false,
        extraGuestsAllowed: false,
        isScheduleCall: true,
        hasReminder,
        ...(hasReminder ? { reminderOffsetSec: card.reminderOffsetSec } : {}),
      },
    },
    additionalNodes: [{ tag: 'meta', attrs: { event_type: 'creation' } }],
  };
}
