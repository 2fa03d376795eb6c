import {
  CALL_AUDIO_PREFIX,
  CALL_VIDEO_PREFIX,
  generateWAMessageFromContent,
  prepareWAMessageMedia,
} from '@whiskeysockets/baileys';
import type {
  AnyMediaMessageContent,
  AnyMessageContent,
  GroupMetadata,
  MiscMessageGenerationOptions,
  WAMessage,
  WAPrivacyCallValue,
  WAPrivacyGroupAddValue,
  WAPrivacyOnlineValue,
  WAPrivacyValue,
  WAReadReceiptsValue,
  proto,
} from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { ValidationError } from '../../errors.js';
import type {
  GroupInfo,
  OutgoingMedia,
  PrivacyField,
  PrivacySettings,
  ProfileChanges,
  SentMessage,
  StatusPost,
} from '../msgnet-driver.js';
import type { RelayContent } from './interactive-content.js';
import type { LabelBook } from './label-book.js';
import { STATUS_JID, userJid } from './jids.js';
import { int64 } from './int64.js';
import type { BaileysSocket } from './socket-port.js';

// The messages and queries the session sends, one function each, over a connected socket.

/** Our own user JID, without the device part. */
export function ownJid(sock: BaileysSocket): string {
  if (!sock.user?.id) throw new Error('The socket has no user yet');
  return userJid(sock.user.id);
}

export function sentMessage(msg: WAMessage | undefined): SentMessage {
  if (!msg?.key.id) throw new Error('The message was not sent');
  return { messageId: msg.key.id, timestamp: (int64(msg.messageTimestamp) ?? Math.floor(Date.now() / 1000)) * 1000 };
}

export async function send(
  sock: BaileysSocket,
  jid: string,
  content: AnyMessageContent,
  options?: MiscMessageGenerationOptions,
): Promise<SentMessage> {
  return sentMessage(await sock.sendMessage(jid, content, options));
}

/**
 * Sends hand-built protobuf content with the stanza nodes it needs (`relayMessage` bypasses `sendMessage`);
 * `options` gives the id to send under and the message a reply quotes.
 */
export async function relay(
  sock: BaileysSocket,
  jid: string,
  content: RelayContent,
  options?: MiscMessageGenerationOptions,
): Promise<SentMessage> {
  const msg = generateWAMessageFromContent(jid, content.message, { ...options, userJid: ownJid(sock) });
  await sock.relayMessage(jid, msg.message!, { messageId: msg.key.id!, additionalNodes: content.additionalNodes });
  return sentMessage(msg);
}

export function mediaContent(media: OutgoingMedia): AnyMediaMessageContent {
  const { data, mimetype } = media;
  const caption = media.caption ? { caption: media.caption } : {};
  switch (media.kind) {
    case 'image':
      return { image: data, mimetype, ...caption };
    case 'video':
      return { video: data, mimetype, ...caption };
    case 'audio':
      return { audio: data, mimetype, ptt: !!media.ptt, ...(media.seconds ? { seconds: media.seconds } : {}) };
    case 'document':
      return { document: data, mimetype, ...(media.fileName ? { fileName: media.fileName } : {}), ...caption };
    case 'sticker':
      return { sticker: data, mimetype };
  }
}

/**
 * Uploads media for a hand-built message (an interactive header, a carousel card): Baileys encrypts it,
 * puts it on the media servers, and returns its `imageMessage`/`videoMessage`/… without caption.
 */
export async function uploadMedia(sock: BaileysSocket, media: OutgoingMedia, log?: Logger): Promise<proto.IMessage> {
  return prepareWAMessageMedia(mediaContent({ ...media, caption: undefined }), {
    upload: sock.waUploadToServer,
    ...(log ? { logger: log } : {}),
  });
}

/** A status goes to `status@broadcast` and reaches only `statusJidList` (#1300), which must hold our own JID (#619). */
export async function publishStatus(sock: BaileysSocket, post: StatusPost, recipients: string[]): Promise<SentMessage> {
  const options: MiscMessageGenerationOptions = { statusJidList: recipients, broadcast: true };
  if (post.type === 'text') {
    return send(
      sock,
      STATUS_JID,
      { text: post.text },
      {
        ...options,
        // `assertColor` drops numbers: the colour must be a "#RRGGBB" string.
        ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}),
        ...(post.font !== undefined ? { font: post.font } : {}),
      },
    );
  }
  if (!post.media) throw new ValidationError(`A ${post.type} status needs media`);
  const media: OutgoingMedia = { ...post.media, kind: post.type, caption: post.text || post.media.caption };
  if (post.type === 'audio') {
    media.ptt = post.media.ptt ?? true;
    media.caption = undefined;
  }
  return send(sock, STATUS_JID, mediaContent(media), {
    ...options,
    // For a voice note Baileys turns the colour into the note's `backgroundArgb`.
    ...(post.type === 'audio' && post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}),
  });
}

export async function createCallLink(
  sock: BaileysSocket,
  kind: 'audio' | 'video',
  startTime?: number,
): Promise<{ token: string; url: string }> {
  const token = await sock.createCallLink(kind, startTime ? { startTime: Math.floor(startTime) } : undefined);
  if (!token) throw new Error('The network did not return a call link');
  return { token, url: (kind === 'video' ? CALL_VIDEO_PREFIX : CALL_AUDIO_PREFIX) + token };
}

export async function listGroups(
  sock: BaileysSocket,
  includeMembers: boolean,
  onGroup?: (group: GroupMetadata) => void,
): Promise<GroupInfo[]> {
  const groups = Object.values(await sock.groupFetchAllParticipating());
  groups.forEach((g) => onGroup?.(g));
  return groups.map((g) => ({
    jid: g.id,
    name: g.subject,
    description: g.desc ?? '',
    creatorJid: g.ownerPn ?? g.owner ?? '',
    memberCount: g.size ?? g.participants.length,
    ...(includeMembers
      ? {
          members: g.participants.map((p) => ({
            // v7 may list members by LID; the phone number is beside it when known.
            jid: p.phoneNumber ?? p.id,
            // `isAdmin`/`isSuperAdmin` are declared by Baileys but never filled: derive them from `admin`.
            isAdmin: p.admin === 'admin' || p.admin === 'superadmin',
            isSuperAdmin: p.admin === 'superadmin',
          })),
        }
      : {}),
  }));
}

export async function updateProfile(sock: BaileysSocket, changes: ProfileChanges): Promise<void> {
  if (changes.picture === null) await sock.removeProfilePicture(ownJid(sock));
  else if (changes.picture) await sock.updateProfilePicture(ownJid(sock), changes.picture);
  if (changes.name !== undefined) await sock.updateProfileName(changes.name);
  if (changes.status !== undefined) await sock.updateProfileStatus(changes.status);
}

/** Our field names to Baileys' privacy setting names. */
const PRIVACY_NAMES: Record<PrivacyField, string> = {
  lastSeen: 'last',
  online: 'online',
  profile: 'profile',
  status: 'status',
  readReceipts: 'readreceipts',
  callAdd: 'calladd',
  groupAdd: 'groupadd',
};

const VISIBILITY = ['all', 'contacts', 'contact_blacklist', 'none'];
const ALLOWED: Record<PrivacyField, string[]> = {
  lastSeen: VISIBILITY,
  profile: VISIBILITY,
  status: VISIBILITY,
  online: ['all', 'match_last_seen'],
  readReceipts: ['all', 'none'],
  callAdd: ['all', 'known'],
  groupAdd: ['all', 'contacts', 'contact_blacklist'],
};

export async function getPrivacy(sock: BaileysSocket): Promise<PrivacySettings> {
  // Baileys caches the settings per socket and its setters do not update that cache: always force.
  const settings = await sock.fetchPrivacySettings(true);
  const out = {} as PrivacySettings;
  for (const [field, name] of Object.entries(PRIVACY_NAMES) as [PrivacyField, string][]) {
    out[field] = settings[name] ?? '';
  }
  return out;
}

export async function setPrivacy(sock: BaileysSocket, field: PrivacyField, value: string): Promise<void> {
  if (!ALLOWED[field].includes(value)) throw new ValidationError(`Invalid value for ${field}: ${value}`);
  switch (field) {
    case 'lastSeen':
      return sock.updateLastSeenPrivacy(value as WAPrivacyValue);
    case 'online':
      return sock.updateOnlinePrivacy(value as WAPrivacyOnlineValue);
    case 'profile':
      return sock.updateProfilePicturePrivacy(value as WAPrivacyValue);
    case 'status':
      return sock.updateStatusPrivacy(value as WAPrivacyValue);
    case 'readReceipts':
      return sock.updateReadReceiptsPrivacy(value as WAReadReceiptsValue);
    case 'callAdd':
      return sock.updateCallPrivacy(value as WAPrivacyCallValue);
    case 'groupAdd':
      return sock.updateGroupsAddPrivacy(value as WAPrivacyGroupAddValue);
  }
}

/**
 * Rebuilds the label book from a full app-state snapshot: without a stored version the server sends
 * the whole `regular` collection, not just the patches since the last sync. Returns dropped associations.
 */
export async function refreshChatLabels(
  sock: BaileysSocket,
  labels: LabelBook,
): Promise<{ chatJid: string; labelId: string }[]> {
  labels.beginRebuild();
  try {
    await sock.authState.keys.set({ 'app-state-sync-version': { regular: null } });
    await sock.resyncAppState(['regular'], true);
  } catch (err) {
    labels.endRebuild(false);
    throw err;
  }
  return labels.endRebuild(true);
}

export async function lookup(
  sock: BaileysSocket,
  number: string,
): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
  const [hit] = (await sock.onWhatsApp(number)) ?? [];
  if (!hit?.exists) return { found: false, jid: undefined, lid: undefined };
  let lid: string | undefined;
  try {
    lid = (await sock.signalRepository.lidMapping.getLIDForPN(hit.jid)) ?? undefined;
  } catch {
    // The LID is a bonus: a failed mapping query must not hide that the number exists.
    lid = undefined;
  }
  return { found: true, jid: hit.jid, lid };
}
