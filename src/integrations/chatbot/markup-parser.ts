import type { Button, PixPayment } from '../../msgnet/msgnet-driver.js';
import { PIX_KEY_TYPES } from '../../msgnet/pix-key.js';

/**
 * The interactive markup of a flow's text bubble (spec 4.8):
 *   `[reply|<label>]`, `[url:<link>|<label>]`, `[call:<number>|<label>]`, `[copy:<code>|<label>]`,
 *   `[pix:<name>;<key>;<type>|<label>]`.
 * A token is `[`, a type, an optional `:` and parameter, `|`, a label, `]`, with no `[`, `]` or `|` inside.
 * Every token is removed from the text; a malformed one (unknown type, missing or extra parameter, empty
 * label, `;` outside a pix parameter, bad URL, phone or pix key type) is dropped without a button.
 * Bracketed text without `|` is not a token and stays.
 */

export interface ParsedMarkup {
  /** The message body: the text with every token removed. */
  text: string;
  buttons: Button[];
  payments: PixPayment[];
}

/** What one token turned into. */
export type MarkupToken =
  { kind: 'button'; button: Button } | { kind: 'payment'; payment: PixPayment } | { kind: 'malformed'; reason: string };

const TOKEN = /\[([A-Za-z]+)(?::([^[\]|]*))?\|([^[\]|]*)\]/g;
const PHONE = /^\+?[\d\s().-]{5,24}$/;
/** Marks where a token was, so that the spaces around it can be tidied. */
const HOLE = '\u0000';

const malformed = (reason: string): MarkupToken => ({ kind: 'malformed', reason });

function isWebUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** One token's meaning, from its type, parameter (undefined without `:`) and label. */
export function parseToken(type: string, param: string | undefined, rawLabel: string): MarkupToken {
  const kind = type.toLowerCase();
  const label = rawLabel.trim();
  const value = param?.trim();
  if (kind === 'pix') {
    if (!value) return malformed('pix needs name;key;type');
    const parts = value.split(';').map((p) => p.trim());
    if (parts.length !== 3 || parts.some((p) => !p)) return malformed('pix needs exactly name;key;type');
    const [merchantName, key, rawType] = parts as [string, string, string];
    const keyType = rawType.toUpperCase() as PixPayment['keyType'];
    if (!PIX_KEY_TYPES.includes(keyType)) return malformed(`pix key type must be one of ${PIX_KEY_TYPES.join(', ')}`);
    return { kind: 'payment', payment: { merchantName, key, keyType } };
  }
  if (!['reply', 'url', 'call', 'copy'].includes(kind)) return malformed(`unknown type '${type}'`);
  if (label.includes(';') || value?.includes(';')) return malformed("';' is only allowed between pix parameters");
  if (!label) return malformed('missing label');
  switch (kind) {
    case 'reply':
      if (param !== undefined) return malformed('reply takes no parameter');
      return { kind: 'button', button: { type: 'reply', id: label, label } };
    case 'url':
      if (!value) return malformed('url needs a link');
      if (!isWebUrl(value)) return malformed('url needs an http(s) link');
      return { kind: 'button', button: { type: 'url', url: value, label } };
    case 'call':
      if (!value) return malformed('call needs a number');
      if (!PHONE.test(value)) return malformed('call needs a phone number');
      return { kind: 'button', button: { type: 'call', phoneNumber: value.replace(/[\s().-]/g, ''), label } };
    default:
      if (!value) return malformed('copy needs a code');
      return { kind: 'button', button: { type: 'copy', code: value, label } };
  }
}

/** Removes the holes left by tokens, with the spaces around them; a line that held only tokens goes. */
function tidy(text: string): string {
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes(HOLE)) {
      lines.push(line);
      continue;
    }
    const cleaned = line.replace(/[ \t]*\u0000(?:[ \t]*\u0000)*[ \t]*/g, ' ').trim();
    if (cleaned) lines.push(cleaned);
  }
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The body, buttons and payments of a bubble's text (a pure function). */
export function parseMarkup(text: string): ParsedMarkup {
  const buttons: Button[] = [];
  const payments: PixPayment[] = [];
  let found = false;
  const holed = text.replace(TOKEN, (_all, type: string, param: string | undefined, label: string) => {
    found = true;
    const token = parseToken(type, param, label);
    if (token.kind === 'button') buttons.push(token.button);
    else if (token.kind === 'payment') payments.push(token.payment);
    return HOLE;
  });
  return { text: found ? tidy(holed) : text.trim(), buttons, payments };
}

/** One message to send for a bubble. */
export type MarkupMessage =
  | { kind: 'text'; text: string }
  | { kind: 'buttons'; text: string; buttons: Button[] }
  | { kind: 'payment'; payment: PixPayment };

/** Buttons per interactive message (spec 8). */
export const MAX_BUTTONS_PER_MESSAGE = 3;
/** The body of a button message that has no text of its own (WhatsApp requires one). */
export const EMPTY_BODY = '…';

/** Buttons in messages of at most three: the text is the body of the first, later ones carry EMPTY_BODY. */
export function buttonMessages(text: string, buttons: Button[]): MarkupMessage[] {
  const out: MarkupMessage[] = [];
  for (let i = 0; i < buttons.length; i += MAX_BUTTONS_PER_MESSAGE) {
    out.push({
      kind: 'buttons',
      text: i === 0 && text ? text : EMPTY_BODY,
      buttons: buttons.slice(i, i + MAX_BUTTONS_PER_MESSAGE),
    });
  }
  return out;
}

/** The messages of a parsed bubble: its text (with its buttons in groups of three), then each payment alone. */
export function markupMessages(parsed: ParsedMarkup): MarkupMessage[] {
  const out: MarkupMessage[] = parsed.buttons.length
    ? buttonMessages(parsed.text, parsed.buttons)
    : parsed.text
      ? [{ kind: 'text', text: parsed.text }]
      : [];
  for (const payment of parsed.payments) out.push({ kind: 'payment', payment });
  return out;
}
