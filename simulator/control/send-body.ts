import type { AnyMessageContent } from '@whiskeysockets/baileys';
import { z } from 'zod';
import type { Phone } from '../phone/phone.js';

/** What a phone can send through `POST /phones/:number/send`: one kind per request. */
export const sendBody = z
  .object({
    to: z.string().min(1),
    text: z.string().max(65_536).optional(),
    media: z
      .object({
        kind: z.enum(['image', 'video', 'audio', 'document', 'sticker']),
        base64: z.string().min(1),
        mimetype: z.string().optional(),
        caption: z.string().optional(),
        fileName: z.string().optional(),
        ptt: z.boolean().optional(),
      })
      .optional(),
    location: z
      .object({
        latitude: z.number(),
        longitude: z.number(),
        name: z.string().optional(),
        address: z.string().optional(),
      })
      .optional(),
    contact: z.object({ name: z.string().min(1), number: z.string().regex(/^\+?\d{6,15}$/) }).optional(),
    reaction: z.object({ messageId: z.string().min(1), emoji: z.string(), fromMe: z.boolean().optional() }).optional(),
    poll: z
      .object({
        name: z.string().min(1),
        options: z.array(z.string().min(1)).min(2).max(12),
        selectableCount: z.number().int().min(0).optional(),
      })
      .optional(),
    pollVote: z.object({ pollId: z.string().min(1), options: z.array(z.string()) }).optional(),
    buttonReply: z.object({ id: z.string().min(1), text: z.string() }).optional(),
    listReply: z.object({ id: z.string().min(1), title: z.string() }).optional(),
    reply: z.object({ messageId: z.string().min(1) }).optional(),
  })
  .refine(
    (b) =>
      ['text', 'media', 'location', 'contact', 'reaction', 'poll', 'pollVote', 'buttonReply', 'listReply'].filter(
        (k) => b[k as keyof typeof b] !== undefined,
      ).length === 1,
    { message: 'give exactly one of text, media, location, contact, reaction, poll, pollVote, buttonReply, listReply' },
  );

export type SendBody = z.infer<typeof sendBody>;

/** Turns a control request into Baileys' message content (and the quoted message, for a reply). */
export function messageContent(
  body: SendBody,
  phone: Phone,
): { content: AnyMessageContent; quoted?: { id: string; from: string } } {
  const to = body.to.includes('@') ? body.to : `${body.to}@s.whatsapp.net`;
  const quoted = body.reply ? quotedFrom(phone, body.reply.messageId) : undefined;
  const withQuote = (
    content: AnyMessageContent,
  ): { content: AnyMessageContent; quoted?: { id: string; from: string } } =>
    quoted ? { content, quoted } : { content };
  if (body.text !== undefined) return withQuote({ text: body.text });
  if (body.media) {
    const bytes = Buffer.from(body.media.base64, 'base64');
    const m = body.media;
    switch (m.kind) {
      case 'image':
        return withQuote({
          image: bytes,
          ...(m.caption ? { caption: m.caption } : {}),
          ...(m.mimetype ? { mimetype: m.mimetype } : {}),
        });
      case 'video':
        return withQuote({
          video: bytes,
          ...(m.caption ? { caption: m.caption } : {}),
          ...(m.mimetype ? { mimetype: m.mimetype } : {}),
        });
      case 'audio':
        return withQuote({
          audio: bytes,
          mimetype: m.mimetype ?? 'audio/ogg; codecs=opus',
          ptt: m.ptt ?? false,
          seconds: 1,
        });
      case 'sticker':
        return withQuote({ sticker: bytes });
      case 'document':
        return withQuote({
          document: bytes,
          mimetype: m.mimetype ?? 'application/octet-stream',
          fileName: m.fileName ?? 'file',
          ...(m.caption ? { caption: m.caption } : {}),
        });
    }
  }
  if (body.location) {
    const l = body.location;
    return withQuote({
      location: {
        degreesLatitude: l.latitude,
        degreesLongitude: l.longitude,
        ...(l.name ? { name: l.name } : {}),
        ...(l.address ? { address: l.address } : {}),
      },
    });
  }
  if (body.contact) {
    const digits = body.contact.number.replace(/\D/g, '');
    const vcard = `BEGIN:VCARD\nVERSION:3.0\nFN:${body.contact.name}\nTEL;type=CELL;type=VOICE;waid=${digits}:+${digits}\nEND:VCARD`;
    return withQuote({
      contacts: { displayName: body.contact.name, contacts: [{ displayName: body.contact.name, vcard }] },
    });
  }
  if (body.reaction) {
    const r = body.reaction;
    const record = phone.received.find((x) => x.id === r.messageId);
    const fromMe = r.fromMe ?? !record;
    return {
      content: {
        react: {
          text: r.emoji,
          key: {
            remoteJid: to,
            id: r.messageId,
            fromMe,
            ...(to.endsWith('@g.us') && record ? { participant: record.from } : {}),
          },
        },
      },
    };
  }
  if (body.poll) {
    return {
      content: {
        poll: { name: body.poll.name, values: body.poll.options, selectableCount: body.poll.selectableCount ?? 1 },
      },
    };
  }
  if (body.buttonReply) {
    return withQuote({
      buttonReply: { id: body.buttonReply.id, displayText: body.buttonReply.text, index: 0 },
      type: 'plain',
    });
  }
  const l = body.listReply!;
  return withQuote({
    listReply: { title: l.title, listType: 1, singleSelectReply: { selectedRowId: l.id } },
  });
}

function quotedFrom(phone: Phone, id: string): { id: string; from: string } {
  const record = phone.received.find((r) => r.id === id);
  return { id, from: record?.from ?? phone.meId };
}
