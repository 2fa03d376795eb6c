import type { MediaConfig } from '../../config/config.js';
import { AppError, NamedError } from '../../errors.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import type { PreparedMedia } from '../../media/outgoing-media.js';
import { safeFetch } from '../../media/safe-fetch.js';
import type { MsgNetSession, OutgoingMedia } from '../../msgnet/msgnet-driver.js';
import type { HelpdeskConfig } from '../../store/records.js';
import type { AgentMessage, BridgeState } from './bridge-state.js';
import type { AgentAttachment } from './helpdesk-calls.js';
import { markdownToWhatsapp, signed } from './message-format.js';

/** An agent's message that cannot be sent; its message is what the private note in Chatwoot says. */
export class DeliveryError extends NamedError {}

export interface DeliveryContext {
  session: MsgNetSession;
  config: HelpdeskConfig;
  state: BridgeState;
  media: MediaConfig;
  /** Called with each WhatsApp id as soon as it is sent (its echo must not go back to Chatwoot). */
  onSent(messageId: string): void;
}

const WHATSAPP_JID = /^[\d-]{5,40}@(s\.whatsapp\.net|g\.us|lid)$/;

/** The chat of the conversation: the one the bridge linked it to, else the contact's identifier or phone. */
async function chatOf(dc: DeliveryContext, m: AgentMessage): Promise<string> {
  const linked = await dc.state.chatOfConversation(m.conversationId);
  if (linked) return linked;
  if (m.contact.identifier && WHATSAPP_JID.test(m.contact.identifier)) return m.contact.identifier;
  const digits = m.contact.phone?.replace(/[^\d]/g, '');
  if (digits && digits.length >= 6) return `${digits}@s.whatsapp.net`;
  throw new DeliveryError('the contact has no WhatsApp number');
}

function fileNameFrom(url: string): string | undefined {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return /^[^\\/:*?"<>|\u0000-\u001f]{1,200}\.[A-Za-z0-9]{1,10}$/.test(last) ? last : undefined;
  } catch {
    return undefined;
  }
}

/** Downloads an attachment (safe fetch) and makes it sendable; what WhatsApp cannot show goes as a document. */
async function loadAttachment(dc: DeliveryContext, a: AgentAttachment): Promise<OutgoingMedia> {
  let fetched;
  try {
    fetched = await safeFetch(a.url, {
      allowPrivate: dc.media.allowPrivateUrls,
      maxBytes: dc.media.maxBytes,
      timeoutMs: dc.media.fetchTimeoutMs,
    });
  } catch (err) {
    throw new DeliveryError(`the attachment could not be downloaded (${(err as Error).message})`);
  }
  const declaredMime = fetched.contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
  const fileName = a.fileName ?? fileNameFrom(fetched.finalUrl);
  const common = {
    ...(declaredMime ? { declaredMime } : {}),
    ...(fileName ? { fileName } : {}),
    maxBytes: dc.media.maxBytes,
  };
  const kind = a.fileType === 'image' || a.fileType === 'video' || a.fileType === 'audio' ? a.fileType : 'document';
  let prepared: PreparedMedia;
  try {
    prepared = await prepareMedia(kind, fetched.bytes, { ...common, opusAudio: true });
  } catch (err) {
    if (!(err instanceof AppError) || kind === 'document') {
      throw new DeliveryError(`the attachment cannot be sent (${(err as Error).message})`);
    }
    prepared = await prepareMedia('document', fetched.bytes, { ...common, opusAudio: false });
  }
  return {
    kind: prepared.kind,
    data: prepared.data,
    mimetype: prepared.mimetype,
    ...(prepared.fileName ? { fileName: prepared.fileName } : {}),
    ...(prepared.kind === 'audio' ? { ptt: true } : {}),
    ...(prepared.seconds !== undefined ? { seconds: prepared.seconds } : {}),
    ...(prepared.waveform ? { waveform: prepared.waveform } : {}),
  };
}

/**
 * Sends an agent's message to the conversation's WhatsApp chat: its Markdown turned into WhatsApp's
 * marks, signed with the agent's name when `signMessages`, attachments from their `data_url` (the text
 * as the first one's caption when it can carry one). Returns the WhatsApp ids sent.
 * @throws DeliveryError, or the session's error (not connected…)
 */
export async function deliverToWhatsapp(dc: DeliveryContext, m: AgentMessage): Promise<string[]> {
  const jid = await chatOf(dc, m);
  const text = markdownToWhatsapp(m.content);
  const body = dc.config.signMessages ? signed(m.senderName, text) : text;
  const files: OutgoingMedia[] = [];
  for (const a of m.attachments) files.push(await loadAttachment(dc, a));
  const sent: string[] = [];
  const record = (id: string) => {
    sent.push(id);
    dc.onSent(id);
  };
  let caption = body;
  const first = files[0];
  if (caption.trim() && (!first || first.kind === 'audio')) {
    record((await dc.session.messages.sendText(jid, caption)).messageId);
    caption = '';
  }
  for (const [i, file] of files.entries()) {
    record(
      (await dc.session.messages.sendMedia(jid, { ...file, ...(i === 0 && caption.trim() ? { caption } : {}) }))
        .messageId,
    );
  }
  return sent;
}
