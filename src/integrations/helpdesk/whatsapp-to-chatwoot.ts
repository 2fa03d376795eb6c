import type { Logger } from 'pino';
import type { MsgNetSession } from '../../msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../../msgnet/msgnet-events.js';
import type { HelpdeskConfig } from '../../store/records.js';
import type { BridgeState, ChatLink } from './bridge-state.js';
import { ChatwootError } from './chatwoot-http.js';
import type { ChatwootClient, CwContact, CwConversation } from './chatwoot-client.js';
import { whatsappToMarkdown } from './message-format.js';

/** A cached conversation is trusted this long; then its status is read again (a lost webhook heals). */
export const CONVERSATION_RECHECK_MS = 10 * 60_000;

/** What the forwarder needs for one message; the configuration has an inbox. */
export interface ForwardContext {
  client: ChatwootClient;
  config: HelpdeskConfig & { inboxId: number };
  state: BridgeState;
  /** The open session (media bytes, group names); undefined when none is open. */
  session: MsgNetSession | undefined;
  mediaMaxBytes: number;
  signal: AbortSignal;
  log: Logger;
  /** A group's subject, when the network knows it. */
  groupName(jid: string): Promise<string | undefined>;
}

/** The chat a message belongs to, as a Chatwoot contact. */
interface ChatParty {
  jid: string;
  group: boolean;
  /** `+<digits>` for a phone number's chat. */
  phone: string | undefined;
  name: string;
}

const userPart = (jid: string) => jid.split('@')[0]!.split(':')[0]!;

/** Which messages become Chatwoot messages: chats and groups (unless ignored), with something to show. */
export function forwardable(message: NormalizedMessage, config: HelpdeskConfig): boolean {
  if (message.chat.type === 'status' || message.chat.type === 'newsletter') return false;
  if (message.chat.type === 'group' && config.ignoreGroups) return false;
  if (message.type === 'reaction') return false;
  return message.text.trim() !== '' || message.media !== undefined;
}

async function chatParty(fc: ForwardContext, message: NormalizedMessage): Promise<ChatParty> {
  const jid = message.chat.jid;
  const digits = userPart(jid);
  if (message.chat.type === 'group') {
    const name = message.chat.name ?? (await fc.groupName(jid)) ?? digits;
    return { jid, group: true, phone: undefined, name };
  }
  const phone = jid.endsWith('@s.whatsapp.net') ? `+${digits}` : undefined;
  // The push name is the contact's only when the contact wrote; our own sends carry ours.
  const name = (!message.fromMe ? message.sender.name : message.chat.name) ?? phone ?? digits;
  return { jid, group: false, phone, name };
}

function contentOf(message: NormalizedMessage, party: ChatParty): string {
  const text = whatsappToMarkdown(message.text || message.media?.caption || '');
  if (!party.group || message.fromMe) return text;
  const who = message.sender.name ?? `+${userPart(message.sender.jid)}`;
  return `**${who}:**${text ? `\n${text}` : ''}`;
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'application/pdf': 'pdf',
};

function fileNameOf(media: NonNullable<NormalizedMessage['media']>): string {
  if (media.fileName) return media.fileName;
  const mime = media.mimetype.split(';')[0]!.trim().toLowerCase();
  const ext = EXTENSIONS[mime] ?? (/^[a-z0-9]{1,8}$/.exec(mime.split('/')[1] ?? '')?.[0] || 'bin');
  return `${media.kind}.${ext}`;
}

/** The media's bytes as an attachment, or undefined (with the reason logged) when they cannot be had. */
async function attachmentOf(fc: ForwardContext, message: NormalizedMessage) {
  const media = message.media;
  if (!media || !fc.session) return undefined;
  try {
    const got = await fc.session.messages.downloadMedia(message, fc.mediaMaxBytes);
    return {
      fileName: fileNameOf({ ...media, ...(got.fileName ? { fileName: got.fileName } : {}) }),
      contentType: got.mimetype,
      data: got.data,
    };
  } catch (err) {
    fc.log.info({ err, messageId: message.id }, 'helpdesk: media not available, posting the text only');
    return undefined;
  }
}

async function findContact(fc: ForwardContext, party: ChatParty): Promise<CwContact | undefined> {
  if (party.phone) {
    const [byPhone] = await fc.client.filterContactsByPhone(party.phone, fc.signal);
    if (byPhone) return byPhone;
  }
  const found = await fc.client.searchContacts(party.jid, fc.signal);
  return found.find((c) => c.identifier === party.jid);
}

/** The contact (found, or created in our inbox) and its source id in our inbox, if known. */
async function contactFor(
  fc: ForwardContext,
  party: ChatParty,
): Promise<{ contactId: number; sourceId: string | undefined }> {
  const inboxId = fc.config.inboxId;
  const sourceIn = (c: CwContact) => c.contact_inboxes?.find((ci) => ci.inbox?.id === inboxId)?.source_id;
  return fc.client.retrying(async () => {
    const existing = await findContact(fc, party);
    if (existing) return { contactId: existing.id, sourceId: sourceIn(existing) };
    try {
      const created = await fc.client.createContact(
        { inboxId, name: party.name, identifier: party.jid, ...(party.phone ? { phone: party.phone } : {}) },
        fc.signal,
      );
      return { contactId: created.contact.id, sourceId: created.sourceId };
    } catch (err) {
      // Taken meanwhile (an earlier attempt that timed out, or a contact edited in Chatwoot): find it again.
      if (!(err instanceof ChatwootError && err.status === 422)) throw err;
      const again = await findContact(fc, party);
      if (!again) throw err;
      return { contactId: again.id, sourceId: sourceIn(again) };
    }
  }, fc.signal);
}

const openStatus = (config: HelpdeskConfig) => (config.startAsPending ? 'pending' : 'open');

/** Reopens a resolved conversation that `reopenResolved` reuses (pending when `startAsPending`). */
async function reopen(fc: ForwardContext, conversationId: number): Promise<void> {
  await fc.client.retrying(() => fc.client.toggleStatus(conversationId, openStatus(fc.config), fc.signal), fc.signal);
}

/** The cached conversation if it may still be used (reopened when it must), else undefined. */
async function cachedConversation(fc: ForwardContext, link: ChatLink): Promise<number | undefined> {
  const id = link.conversationId;
  if (id === undefined) return undefined;
  let resolved = link.resolved ?? false;
  if (Date.now() - link.checkedAt >= CONVERSATION_RECHECK_MS) {
    let current: CwConversation;
    try {
      current = await fc.client.retrying(() => fc.client.getConversation(id, fc.signal), fc.signal);
    } catch (err) {
      if (err instanceof ChatwootError && err.status === 404) return undefined;
      throw err;
    }
    resolved = current.status === 'resolved';
  }
  if (resolved && !fc.config.reopenResolved) return undefined;
  if (resolved) await reopen(fc, id);
  return id;
}

/**
 * The conversation a chat's message goes to: the cached one while usable; otherwise the contact's latest
 * in our inbox (any status with `reopenResolved`, reopened; else the latest that is not resolved), or a
 * new one (`pending` with `startAsPending`, else `open`).
 */
async function conversationFor(fc: ForwardContext, party: ChatParty): Promise<number> {
  try {
    return await conversationOf(fc, party, await fc.state.chatLink(party.jid));
  } catch (err) {
    // The cached contact was deleted in Chatwoot: find or create it again, once.
    if (!(err instanceof ChatwootError && err.status === 404)) throw err;
    return conversationOf(fc, party, undefined);
  }
}

async function conversationOf(fc: ForwardContext, party: ChatParty, cached: ChatLink | undefined): Promise<number> {
  if (cached) {
    const id = await cachedConversation(fc, cached);
    if (id !== undefined) {
      if (cached.resolved || Date.now() - cached.checkedAt >= CONVERSATION_RECHECK_MS) {
        await fc.state.saveChatLink(party.jid, { ...cached, resolved: false, checkedAt: Date.now() });
      }
      return id;
    }
  }
  const { contactId, sourceId: known } = cached
    ? { contactId: cached.contactId, sourceId: cached.sourceId }
    : await contactFor(fc, party);
  const inboxId = fc.config.inboxId;
  const sourceId =
    known ?? (await fc.client.retrying(() => fc.client.createContactInbox(contactId, inboxId, fc.signal), fc.signal));
  const ours = (await fc.client.retrying(() => fc.client.contactConversations(contactId, fc.signal), fc.signal))
    .filter((c) => c.inbox_id === inboxId)
    .sort((a, b) => b.id - a.id);
  const reusable = fc.config.reopenResolved ? ours[0] : ours.find((c) => c.status !== 'resolved');
  let conversationId: number;
  if (reusable) {
    conversationId = reusable.id;
    if (reusable.status === 'resolved') await reopen(fc, conversationId);
  } else {
    // A conversation created by an attempt that timed out is found by the next one.
    const created = await fc.client.retrying(async (attempt) => {
      if (attempt > 0) {
        const again = (await fc.client.contactConversations(contactId, fc.signal)).find(
          (c) => c.inbox_id === inboxId && c.status !== 'resolved',
        );
        if (again) return again;
      }
      return fc.client.createConversation({ inboxId, contactId, sourceId, status: openStatus(fc.config) }, fc.signal);
    }, fc.signal);
    conversationId = created.id;
  }
  await fc.state.saveChatLink(party.jid, { contactId, sourceId, conversationId, checkedAt: Date.now() });
  return conversationId;
}

/**
 * Posts one WhatsApp message to its Chatwoot conversation: `incoming` when the contact (or a group member)
 * wrote, `outgoing` for the instance's own sends made elsewhere, with `source_id: WAID:<id>` and the media
 * as a multipart attachment. `checkExisting` (an earlier attempt may have reached Chatwoot) first looks
 * for that source id among the conversation's latest messages. Returns Chatwoot's message id.
 */
export async function forwardToChatwoot(
  fc: ForwardContext,
  message: NormalizedMessage,
  checkExisting: boolean,
): Promise<number> {
  const party = await chatParty(fc, message);
  const content = contentOf(message, party);
  const attachment = await attachmentOf(fc, message);
  const placeholder =
    message.media && !attachment ? `${content ? `${content}\n` : ''}_[${message.media.kind} not available]_` : content;
  const sourceId = `WAID:${message.id}`;
  for (let round = 0; ; round++) {
    const conversationId = await conversationFor(fc, party);
    try {
      const posted = await fc.client.retrying(async (attempt) => {
        if (attempt > 0 || checkExisting) {
          const earlier = (await fc.client.listMessages(conversationId, fc.signal)).find(
            (m) => m.source_id === sourceId,
          );
          if (earlier) return earlier;
        }
        return fc.client.createMessage(
          conversationId,
          {
            content: placeholder,
            messageType: message.fromMe ? 'outgoing' : 'incoming',
            private: false,
            sourceId,
            ...(attachment ? { attachment } : {}),
          },
          fc.signal,
        );
      }, fc.signal);
      return posted.id;
    } catch (err) {
      // The conversation was deleted in Chatwoot: forget it and open another, once.
      if (round > 0 || !(err instanceof ChatwootError && err.status === 404)) throw err;
      const link = await fc.state.chatLink(party.jid);
      if (link) {
        await fc.state.saveChatLink(party.jid, {
          contactId: link.contactId,
          ...(link.sourceId ? { sourceId: link.sourceId } : {}),
          checkedAt: Date.now(),
        });
      }
      checkExisting = false;
    }
  }
}
