import type { ContactCard } from '../msgnet-driver.js';
import { digitsOf } from './jids.js';

// Contact cards as WhatsApp carries them: vCard 3.0 text (RFC 2426), built for sends and read on receipt.

/** Escapes a text value: `\`, `,`, `;` and line breaks would otherwise end or split it. */
function escapeValue(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/,/g, '\\,')
    .replace(/;/g, '\\;')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/** Undoes any backslash escape (some phones also escape `:` in URLs). */
function unescapeValue(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

/** The card as a vCard; `waid` on the phone is what makes WhatsApp offer "Message" for it. */
export function toVcard(card: ContactCard): string {
  const name = escapeValue(card.fullName);
  const digits = digitsOf(card.phone);
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    // N is mandatory in 3.0; the full name is not split into parts we cannot know.
    `N:;${name};;;`,
    `FN:${name}`,
    ...(card.organization ? [`ORG:${escapeValue(card.organization)}`] : []),
    ...(digits ? [`TEL;type=CELL;waid=${digits}:+${digits}`] : []),
    ...(card.email ? [`EMAIL:${escapeValue(card.email)}`] : []),
    // A URL is a URI value, not text: escaping its commas would change it.
    ...(card.url ? [`URL:${card.url.replace(/[\r\n]/g, '')}`] : []),
    'END:VCARD',
  ];
  return lines.join('\n');
}

interface Property {
  name: string;
  params: Map<string, string>;
  value: string;
}

/** Content lines, unfolded (a line starting with a space or tab continues the previous one). */
function propertiesOf(vcard: string): Property[] {
  const lines: string[] = [];
  for (const line of vcard.split(/\r\n|\r|\n/)) {
    if (/^[ \t]/.test(line) && lines.length) lines[lines.length - 1] += line.slice(1);
    else if (line) lines.push(line);
  }
  const properties: Property[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const [head = '', ...rawParams] = line.slice(0, colon).split(';');
    // `item1.TEL`: the group prefix only ties a property to its label.
    const name = head.slice(head.lastIndexOf('.') + 1).toUpperCase();
    const params = new Map<string, string>();
    for (const param of rawParams) {
      const eq = param.indexOf('=');
      if (eq < 0) params.set('TYPE', param);
      else params.set(param.slice(0, eq).toUpperCase(), param.slice(eq + 1));
    }
    properties.push({ name, params, value: line.slice(colon + 1) });
  }
  return properties;
}

/** The first component of a structured value (`ORG:Company;Department`). */
function firstComponent(value: string): string {
  const match = /^(?:[^;\\]|\\.)*/.exec(value);
  return match ? match[0] : value;
}

/** A received vCard as a card; `displayName` stands in for a missing FN. */
export function parseVcard(vcard: string, displayName?: string | null): ContactCard {
  const props = propertiesOf(vcard);
  const first = (name: string): Property | undefined => props.find((p) => p.name === name);
  const text = (name: string): string | undefined => {
    const prop = first(name);
    const value = prop ? unescapeValue(prop.value).trim() : '';
    return value || undefined;
  };
  const tel = first('TEL');
  const organization = first('ORG') ? unescapeValue(firstComponent(first('ORG')!.value)).trim() : '';
  const email = text('EMAIL');
  const url = text('URL');
  return {
    fullName: text('FN') ?? displayName ?? '',
    phone: tel ? digitsOf(tel.params.get('WAID') ?? tel.value) : '',
    ...(organization ? { organization } : {}),
    ...(email ? { email } : {}),
    ...(url ? { url } : {}),
  };
}
