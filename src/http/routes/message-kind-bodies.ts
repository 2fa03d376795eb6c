import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { Button } from '../../msgnet/msgnet-driver.js';
import { PIX_KEY_TYPES } from '../../msgnet/pix-key.js';
import { commonFields, quotingFields } from './message-send.js';

/** The bodies of the message-kind routes, and the checks their zod schemas cannot say. */

const text = (max: number) => z.string().trim().min(1).max(max);
const phone = z
  .string()
  .trim()
  .regex(/^\+?[1-9]\d{7,14}$/, 'expected an international phone number (country code first)');

const buttonSchema = z.strictObject({
  id: text(2048).describe('Reply: the id echoed back; URL: the https link; CALL: +<number>; COPY: the text copied'),
  displayText: text(25),
  type: z.enum(['REPLY', 'URL', 'CALL', 'COPY']).optional().describe('REPLY (default), URL, CALL or COPY'),
});

const contactCard = z.strictObject({
  fullName: text(256),
  phone,
  organization: text(256).optional(),
  email: z.email().max(256).optional(),
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
});

const mediaHeader = {
  mediaUrl: z
    .string()
    .trim()
    .max(4096)
    .optional()
    .describe('An image or video shown above the text (URL or data: URI)'),
  mediaType: z
    .string()
    .trim()
    .max(16)
    .optional()
    .describe('The kind of mediaUrl: IMAGE (default), VIDEO or DOCUMENT (any case)'),
};

export const bodies = {
  sticker: z.strictObject({
    ...quotingFields,
    imageUrl: z
      .string()
      .trim()
      .max(16 * 1024 * 1024)
      .optional()
      .describe('The image: a public http(s) URL or a data:image/... URI (required; made a 512×512 WebP)'),
  }),
  contact: z.strictObject({
    ...quotingFields,
    vcard: z
      .union([z.array(contactCard), contactCard])
      .optional()
      .describe('1 to 10 cards `{fullName, phone, organization?, email?, url?}` (one card may be sent bare)'),
  }),
  pix: z.strictObject({
    ...quotingFields,
    merchantName: text(25).optional().describe("The receiver's name (required)"),
    pixKey: text(77).optional().describe('The key (required), in the format of its type'),
    pixKeyType: z
      .enum(PIX_KEY_TYPES as [string, ...string[]])
      .optional()
      .describe(`One of ${PIX_KEY_TYPES.join(', ')} (required)`),
    message: z.string().trim().max(1024).optional().describe('A text shown on the card'),
    items: z
      .array(
        z.strictObject({
          name: text(256),
          description: z.string().trim().max(512).optional(),
          quantity: z.number().int().min(1).max(100_000),
          unitPrice: z.number().min(0).max(1_000_000_000),
        }),
      )
      .max(100)
      .optional()
      .describe('What is being paid for: `[{name, description?, quantity, unitPrice}]`, unitPrice in reais'),
  }),
  form: z.strictObject({
    ...quotingFields,
    message: z.string().trim().max(1024).optional().describe('The text above the button (required)'),
    formType: z
      .enum(['contact_details', 'registration_offer'])
      .optional()
      .describe('contact_details (default) or registration_offer; ignored with buttonParamsJSON'),
    buttonLabel: text(30).optional().describe('The label of the button that opens the form'),
    footerText: text(60).optional(),
    flowToken: text(256).optional().describe("A token of yours, returned with the form's answer"),
    flowId: text(64).optional().describe('The id of a published WhatsApp Flow'),
    flowMessageVersion: z.string().trim().max(8).optional().describe('Default "3"'),
    messageVersion: z.number().int().min(1).max(10).optional().describe('Default 1'),
    buttonParamsJSON: z
      .string()
      .max(16_384)
      .optional()
      .describe(
        "A custom flow: the `galaxy_message` button's parameters as a JSON object (then the fields below are unused)",
      ),
    fullNameVisible: z.boolean().optional(),
    phoneNumberVisible: z.boolean().optional(),
    emailVisible: z.boolean().optional(),
    cpfOrCnpjVisible: z.boolean().optional(),
    deliveryAddressVisible: z.boolean().optional(),
    offerName: text(256).optional().describe('registration_offer: the offer'),
    offerDescription: z.string().trim().max(1024).optional().describe('registration_offer: its description'),
  }),
  button: z.strictObject({
    ...quotingFields,
    contentText: z.string().trim().max(1024).optional().describe('The text above the buttons (required)'),
    headerText: text(60).optional(),
    footerText: text(60).optional(),
    buttons: z.array(buttonSchema).optional().describe('1 to 3 buttons'),
    ...mediaHeader,
  }),
  list: z.strictObject({
    ...quotingFields,
    contentText: z.string().trim().max(1024).optional().describe('The text above the list (required)'),
    buttonText: text(20).optional().describe('The label of the button that opens the list (required)'),
    headerText: text(60).optional(),
    footerText: text(60).optional(),
    sections: z
      .array(
        z.strictObject({
          title: text(24),
          rows: z.array(z.strictObject({ id: text(200), title: text(24), description: text(72).optional() })),
        }),
      )
      .optional()
      .describe('1 to 10 sections of 1 to 10 rows; row ids unique'),
  }),
  carousel: z.strictObject({
    ...quotingFields,
    message: z.string().trim().max(1024).optional().describe('The text above the cards'),
    footer: text(60).optional(),
    cards: z
      .array(
        z.strictObject({
          header: z.strictObject({
            title: text(60),
            subtitle: text(60).optional(),
            imageUrl: z.string().trim().max(4096).optional(),
            videoUrl: z.string().trim().max(4096).optional(),
          }),
          body: z.strictObject({ text: text(1024) }),
          footer: text(60).optional(),
          buttons: z.array(buttonSchema).optional(),
        }),
      )
      .optional()
      .describe('1 to 10 cards, each with up to 3 buttons and an optional image or video'),
  }),
  poll: z.strictObject({
    ...quotingFields,
    question: text(255).optional().describe("The question (required; 'name' is the same field)"),
    name: text(255).optional().describe("Alias of 'question'"),
    options: z.array(text(100)).optional().describe('2 to 12 distinct options'),
    values: z.array(text(100)).optional().describe("Alias of 'options'"),
    maxAnswer: z
      .number()
      .int()
      .optional()
      .describe(
        'How many options a voter may choose (default 1; below 1 counts as 1, above the options as their number)',
      ),
    selectableCount: z.number().int().optional().describe("Alias of 'maxAnswer'"),
  }),
  event: z.strictObject({
    ...quotingFields,
    name: text(256).optional().describe('The title (required)'),
    startAt: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 with a zone (required)'),
    endAt: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 with a zone, after startAt'),
    description: z.string().trim().max(2048).optional(),
    location: text(512).optional().describe("The place's name or address"),
    joinLink: z
      .url({ protocol: /^https$/ })
      .max(2048)
      .optional()
      .describe('An https link to join (a call link)'),
  }),
  reaction: z.strictObject({
    ...commonFields,
    messageId: text(128).optional().describe('The message reacted to (required)'),
    reaction: z
      .string()
      .max(32)
      .optional()
      .describe("One emoji (required); 'remove' (or an empty string) removes the reaction"),
    fromMe: z.boolean().optional().describe('The message is ours (when it is not in the history)'),
    participant: z.string().trim().max(128).optional().describe('Its author in a group (when not ours)'),
  }),
  edit: z.strictObject({
    ...commonFields,
    messageId: text(128).optional().describe('The text message of ours to edit (required)'),
    message: z.string().max(65_536).optional().describe("The new text (required; 'text' is the same field)"),
    text: z.string().max(65_536).optional().describe("Alias of 'message'"),
  }),
  hostedEdit: z.strictObject({
    ...commonFields,
    messageId: text(128).optional().describe('The text message of ours to edit (required)'),
    content: z.string().max(65_536).optional().describe('The new text (required)'),
  }),
  forward: z.strictObject({
    ...commonFields,
    messageId: text(128).optional().describe('A message of the history (required)'),
    to: z.string().trim().max(128).optional().describe("Where to (required; 'number' is the same field)"),
  }),
};

export const invalid = (message: string) => new ValidationError(`Invalid request body: ${message}`);

export function unique(ids: string[], what: string): void {
  if (new Set(ids).size !== ids.length) throw invalid(`${what} must be unique`);
}

export function count<T>(items: T[] | undefined, min: number, max: number, field: string): T[] {
  if (items === undefined) throw new ValidationError(`${field} is required`);
  if (items.length < min || items.length > max) throw invalid(`${field} takes ${min} to ${max} items`);
  return items;
}

/** A button as the body names it: `id` carries the link, the number or the text copied. */
function toButton(b: z.infer<typeof buttonSchema>, where: string): Button {
  switch (b.type ?? 'REPLY') {
    case 'URL': {
      let url: URL | undefined;
      try {
        url = new URL(b.id);
      } catch {
        url = undefined;
      }
      if (url?.protocol !== 'https:') throw invalid(`${where}: a URL button's id is an https link`);
      return { type: 'url', url: b.id, label: b.displayText };
    }
    case 'CALL':
      if (!/^\+[1-9]\d{7,14}$/.test(b.id)) throw invalid(`${where}: a CALL button's id is +<country code><number>`);
      return { type: 'call', phoneNumber: b.id, label: b.displayText };
    case 'COPY':
      return { type: 'copy', code: b.id, label: b.displayText };
    default:
      return { type: 'reply', id: b.id, label: b.displayText };
  }
}

export function toButtons(buttons: z.infer<typeof buttonSchema>[], where: string): Button[] {
  unique(
    buttons.map((b) => b.id),
    `${where} ids`,
  );
  return buttons.map((b, i) => toButton(b, `${where}[${i}]`));
}

/** One emoji (one grapheme that is a pictograph, a flag or a keycap), or '' to remove. */
export function isOneEmoji(value: string): boolean {
  if (value === '') return true;
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(value)];
  return graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u.test(value);
}
