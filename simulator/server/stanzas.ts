import { getBinaryNodeChild, getBinaryNodeChildren } from '@whiskeysockets/baileys';
import type { BinaryNode } from '@whiskeysockets/baileys';

/** The server's own jid, the `from` of its answers. */
export const SERVER_JID = 's.whatsapp.net';

export function unixNow(): string {
  return String(Math.floor(Date.now() / 1000));
}

/** An iq result answering `request`. */
export function iqResult(request: BinaryNode, content?: BinaryNode[], attrs: Record<string, string> = {}): BinaryNode {
  return {
    tag: 'iq',
    attrs: { id: request.attrs.id ?? '', type: 'result', from: request.attrs.to ?? SERVER_JID, ...attrs },
    ...(content ? { content } : {}),
  };
}

/** An iq error answering `request` (Baileys' assertNodeErrorFree raises it as a Boom with the code). */
export function iqError(request: BinaryNode, code: number, text: string): BinaryNode {
  return iqResult(request, [{ tag: 'error', attrs: { code: String(code), text } }], { type: 'error' });
}

export function children(node: BinaryNode | undefined): BinaryNode[] {
  return Array.isArray(node?.content) ? node.content : [];
}

export function child(node: BinaryNode | undefined, tag: string): BinaryNode | undefined {
  return getBinaryNodeChild(node, tag);
}

export function childrenOf(node: BinaryNode | undefined, tag: string): BinaryNode[] {
  return getBinaryNodeChildren(node, tag);
}

export function bytesOf(node: BinaryNode | undefined): Buffer | undefined {
  const c = node?.content;
  if (c instanceof Uint8Array) return Buffer.from(c);
  if (typeof c === 'string') return Buffer.from(c, 'utf8');
  return undefined;
}

export function textOf(node: BinaryNode | undefined): string | undefined {
  return bytesOf(node)?.toString('utf8');
}

/** An n-byte big-endian unsigned integer. */
export function bigEndian(value: number, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  out.writeUIntBE(value, 0, bytes);
  return out;
}

export function readBigEndian(buf: Buffer | undefined): number | undefined {
  if (!buf || buf.length === 0 || buf.length > 6) return undefined;
  return buf.readUIntBE(0, buf.length);
}
