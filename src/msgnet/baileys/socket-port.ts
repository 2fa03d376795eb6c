import type { BaileysEventEmitter, UserFacingSocketConfig, WASocket } from '@whiskeysockets/baileys';

/** The part of a Baileys socket the session uses; tests hand in a fake with just these members. */
export type BaileysSocket = Pick<
  WASocket,
  | 'user'
  | 'authState'
  | 'end'
  | 'logout'
  | 'requestPairingCode'
  | 'sendMessage'
  | 'relayMessage'
  | 'newsletterCreate'
  | 'newsletterUpdate'
  | 'newsletterMetadata'
  | 'newsletterFollow'
  | 'newsletterUnfollow'
  | 'communityCreate'
  | 'communityFetchLinkedGroups'
  | 'communityLinkGroup'
  | 'communityUnlinkGroup'
  | 'readMessages'
  | 'sendPresenceUpdate'
  | 'rejectCall'
  | 'createCallLink'
  | 'groupFetchAllParticipating'
  | 'updateProfilePicture'
  | 'removeProfilePicture'
  | 'updateProfileName'
  | 'updateProfileStatus'
  | 'fetchPrivacySettings'
  | 'updateLastSeenPrivacy'
  | 'updateOnlinePrivacy'
  | 'updateProfilePicturePrivacy'
  | 'updateStatusPrivacy'
  | 'updateReadReceiptsPrivacy'
  | 'updateCallPrivacy'
  | 'updateGroupsAddPrivacy'
  | 'resyncAppState'
  | 'addChatLabel'
  | 'fetchStatus'
  | 'profilePictureUrl'
  | 'getBusinessProfile'
  | 'removeChatLabel'
  | 'onWhatsApp'
  | 'updateMediaMessage'
  | 'waUploadToServer'
  | 'chatModify'
  | 'updateBlockStatus'
  | 'groupCreate'
  | 'groupMetadata'
  | 'groupUpdateSubject'
  | 'groupUpdateDescription'
  | 'groupSettingUpdate'
  | 'groupParticipantsUpdate'
  | 'groupInviteCode'
  | 'groupRevokeInvite'
  | 'groupAcceptInvite'
  | 'groupLeave'
> & {
  /** Baileys' buffered emitter; only `on`/`off` are used, so a plain EventEmitter can stand in. */
  ev: Pick<BaileysEventEmitter, 'on' | 'off'>;
  signalRepository: { lidMapping: Pick<WASocket['signalRepository']['lidMapping'], 'getLIDForPN'> };
};

/** `makeWASocket`'s signature, narrowed to what the session needs back. */
export type SocketFactory = (config: UserFacingSocketConfig) => BaileysSocket;
