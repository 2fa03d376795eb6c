import { EventEmitter } from 'node:events';
import { stat } from 'node:fs/promises';
import type { BaileysEventMap, Contact, GroupMetadata, UserFacingSocketConfig } from '@whiskeysockets/baileys';
import type { BaileysSocket, SocketFactory } from '../../../src/msgnet/baileys/socket-port.js';

export const OWN_ID = '5511999990000:7@s.whatsapp.net';
export const OWN_JID = '5511999990000@s.whatsapp.net';
export const OWN_LID = '88001122334455:7@lid';

/** A Boom-shaped error, as Baileys puts in `lastDisconnect.error`. */
export function boom(statusCode: number, message = 'Connection Failure'): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

type Call = unknown[];

/**
 * A stand-in for a Baileys socket: `ev` is a plain EventEmitter (Baileys' buffered emitter flushes
 * into one), and each method the session calls records its arguments and returns a canned answer.
 */
export class FakeSocket {
  readonly ev = new EventEmitter();
  readonly calls = new Map<string, Call[]>();
  user: Contact | undefined = { id: OWN_ID, lid: OWN_LID, name: 'Me' };
  readonly authState: UserFacingSocketConfig['auth'] & { keys: { set: (data: unknown) => Promise<void> } };
  groups: Record<string, GroupMetadata> = {};
  privacy: Record<string, string> = {};
  callLinkToken: string | undefined = 'TOKEN123';
  /** Label events `resyncAppState` replays, as a full app-state snapshot would. */
  resyncEvents: [keyof BaileysEventMap, unknown][] = [];
  ended = false;
  private messageSeq = 0;

  constructor(
    readonly index: number,
    readonly config: UserFacingSocketConfig,
    private readonly order: string[],
  ) {
    const keys = config.auth.keys;
    this.authState = {
      creds: config.auth.creds,
      keys: {
        ...keys,
        set: async (data: unknown) => {
          this.record('authState.keys.set', data);
          await keys.set(data as never);
        },
      },
    };
  }

  callsOf(name: string): Call[] {
    return this.calls.get(name) ?? [];
  }

  private record(name: string, ...args: unknown[]): void {
    const list = this.calls.get(name) ?? [];
    list.push(args);
    this.calls.set(name, list);
  }

  // ---- driving the session ----

  emit<K extends keyof BaileysEventMap>(event: K, arg: BaileysEventMap[K]): void {
    this.ev.emit(event, arg);
  }

  connecting(): void {
    this.emit('connection.update', { connection: 'connecting', qr: undefined });
  }

  qr(code: string): void {
    this.emit('connection.update', { qr: code });
  }

  open(): void {
    this.emit('connection.update', { connection: 'open' });
  }

  close(error: Error | undefined): void {
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  // ---- the socket API the session uses ----

  end = async (error: Error | undefined): Promise<void> => {
    this.record('end', error);
    this.order.push(`end:${this.index}`);
    this.ended = true;
  };

  logout = async (msg?: string): Promise<void> => this.record('logout', msg);

  requestPairingCode = async (phone: string, custom?: string): Promise<string> => {
    this.record('requestPairingCode', phone, custom);
    return 'ABCD1234';
  };

  sendMessage = async (jid: string, content: unknown, options?: unknown) => {
    this.record('sendMessage', jid, content, options);
    return { key: { remoteJid: jid, fromMe: true, id: `SENT${++this.messageSeq}` }, messageTimestamp: 1_700_000_000 };
  };

  relayMessage = async (jid: string, message: unknown, options: { messageId?: string }): Promise<string> => {
    this.record('relayMessage', jid, message, options);
    return options.messageId ?? '';
  };

  /** Channels the fake network knows, by JID, in the raw shape `newsletterMetadata` answers. */
  newsletters = new Map<string, Record<string, unknown>>();
  /** The next call of a channel or community method fails with this error (a Boom, as the server refuses). */
  refusals = new Map<string, Error>();
  private refused(name: string): void {
    const err = this.refusals.get(name);
    this.refusals.delete(name);
    if (err) throw err;
  }

  newsletterCreate = async (name: string, description?: string) => {
    this.record('newsletterCreate', name, description);
    this.refused('newsletterCreate');
    const id = `12036300000000000${this.callsOf('newsletterCreate').length}@newsletter`;
    // A test may have described the new channel already (its picture, say).
    if (!this.newsletters.has(id)) {
      this.newsletters.set(id, {
        id,
        thread_metadata: { name: { text: name }, description: { text: description ?? '' }, invite: 'INV1TE' },
        viewer_metadata: { role: 'OWNER' },
      });
    }
    return { id, owner: undefined, name, description: description ?? '', invite: 'INV1TE', subscribers: 0 };
  };
  newsletterUpdate = async (jid: string, updates: unknown): Promise<unknown> => {
    this.record('newsletterUpdate', jid, updates);
    this.refused('newsletterUpdate');
    return {};
  };
  newsletterMetadata = async (type: string, key: string) => {
    this.record('newsletterMetadata', type, key);
    this.refused('newsletterMetadata');
    return (this.newsletters.get(key) ?? null) as never;
  };
  newsletterFollow = async (jid: string): Promise<unknown> => {
    this.record('newsletterFollow', jid);
    this.refused('newsletterFollow');
    return {};
  };
  newsletterUnfollow = async (jid: string): Promise<unknown> => {
    this.record('newsletterUnfollow', jid);
    this.refused('newsletterUnfollow');
    return {};
  };
  communityCreate = async (subject: string, body: string): Promise<GroupMetadata | null> => {
    this.record('communityCreate', subject, body);
    this.refused('communityCreate');
    return { id: '120363000000000099@g.us', subject, desc: body, owner: OWN_JID, participants: [], isCommunity: true };
  };
  communityJoinApprovalMode = async (jid: string, mode: 'on' | 'off') => {
    this.record('communityJoinApprovalMode', jid, mode);
    this.refused('communityJoinApprovalMode');
  };
  communityFetchLinkedGroups = async (jid: string) => {
    this.record('communityFetchLinkedGroups', jid);
    this.refused('communityFetchLinkedGroups');
    const linked = Object.values(this.groups).filter((g) => g.linkedParent === jid);
    return {
      communityJid: jid,
      isCommunity: true,
      linkedGroups: linked.map((g) => ({
        id: g.id,
        subject: g.subject,
        creation: undefined,
        owner: undefined,
        size: undefined,
      })),
    };
  };
  communityLinkGroup = async (groupJid: string, parentJid: string): Promise<void> => {
    this.record('communityLinkGroup', groupJid, parentJid);
    this.refused('communityLinkGroup');
  };
  communityUnlinkGroup = async (groupJid: string, parentJid: string): Promise<void> => {
    this.record('communityUnlinkGroup', groupJid, parentJid);
    this.refused('communityUnlinkGroup');
  };

  /** Media uploads (Baileys encrypts to a temporary file first), answered with a fake CDN location. */
  waUploadToServer = async (
    encFilePath: string,
    opts: { fileEncSha256B64: string; mediaType: string; timeoutMs?: number },
  ): Promise<{ mediaUrl: string; directPath: string }> => {
    const { size } = await stat(encFilePath);
    this.record('waUploadToServer', { mediaType: opts.mediaType, fileEncSha256B64: opts.fileEncSha256B64, size });
    const n = this.callsOf('waUploadToServer').length;
    return { mediaUrl: `https://mmg.example.net/upload/${n}`, directPath: `/upload/${n}` };
  };

  readMessages = async (keys: unknown[]): Promise<void> => this.record('readMessages', keys);
  chatModify = async (mod: unknown, jid: string): Promise<void> => this.record('chatModify', mod, jid);
  updateBlockStatus = async (jid: string, action: string): Promise<void> =>
    this.record('updateBlockStatus', jid, action);
  sendPresenceUpdate = async (type: string, to?: string): Promise<void> => this.record('sendPresenceUpdate', type, to);
  addChatLabel = async (jid: string, labelId: string): Promise<void> => this.record('addChatLabel', jid, labelId);
  removeChatLabel = async (jid: string, labelId: string): Promise<void> => this.record('removeChatLabel', jid, labelId);
  rejectCall = async (callId: string, from: string): Promise<void> => this.record('rejectCall', callId, from);

  createCallLink = async (type: string, event?: { startTime: number }): Promise<string | undefined> => {
    this.record('createCallLink', type, event);
    return this.callLinkToken;
  };

  groupFetchAllParticipating = async (): Promise<Record<string, GroupMetadata>> => {
    this.record('groupFetchAllParticipating');
    return this.groups;
  };

  updateProfilePicture = async (jid: string, content: unknown): Promise<void> =>
    this.record('updateProfilePicture', jid, content);
  removeProfilePicture = async (jid: string): Promise<void> => this.record('removeProfilePicture', jid);
  updateProfileName = async (name: string): Promise<void> => this.record('updateProfileName', name);
  updateProfileStatus = async (status: string): Promise<void> => this.record('updateProfileStatus', status);

  fetchPrivacySettings = async (force?: boolean): Promise<Record<string, string>> => {
    this.record('fetchPrivacySettings', force);
    return this.privacy;
  };

  updateLastSeenPrivacy = async (v: string): Promise<void> => this.record('updateLastSeenPrivacy', v);
  updateOnlinePrivacy = async (v: string): Promise<void> => this.record('updateOnlinePrivacy', v);
  updateProfilePicturePrivacy = async (v: string): Promise<void> => this.record('updateProfilePicturePrivacy', v);
  updateStatusPrivacy = async (v: string): Promise<void> => this.record('updateStatusPrivacy', v);
  updateReadReceiptsPrivacy = async (v: string): Promise<void> => this.record('updateReadReceiptsPrivacy', v);
  updateCallPrivacy = async (v: string): Promise<void> => this.record('updateCallPrivacy', v);
  updateGroupsAddPrivacy = async (v: string): Promise<void> => this.record('updateGroupsAddPrivacy', v);

  resyncAppState = async (collections: readonly string[], isInitialSync: boolean): Promise<void> => {
    this.record('resyncAppState', collections, isInitialSync);
    for (const [event, arg] of this.resyncEvents) this.ev.emit(event, arg);
  };

  /** About texts, pictures and business flags the fake network shows; a jid absent from a map is hidden. */
  abouts = new Map<string, string>();
  pictures = new Map<string, string>();
  businesses = new Set<string>();
  fetchStatus = async (...jids: string[]) => {
    this.record('fetchStatus', ...jids);
    return jids
      .filter((j) => this.abouts.has(j))
      .map((id) => ({ id, status: { status: this.abouts.get(id), setAt: new Date(0) } }));
  };
  profilePictureUrl = async (jid: string, type?: string): Promise<string | undefined> => {
    this.record('profilePictureUrl', jid, type);
    if (!this.pictures.has(jid)) throw new Error('item-not-found');
    return this.pictures.get(jid);
  };
  getBusinessProfile = async (jid: string) => {
    this.record('getBusinessProfile', jid);
    return this.businesses.has(jid)
      ? ({ wid: jid, description: 'shop', website: [], business_hours: {} } as never)
      : undefined;
  };
  onWhatsApp = async (...numbers: string[]): Promise<{ jid: string; exists: boolean }[]> => {
    this.record('onWhatsApp', ...numbers);
    return numbers.map((n) => ({ jid: `${n.replace(/\D/g, '')}@s.whatsapp.net`, exists: !n.startsWith('000') }));
  };

  /** The status each participant gets from `groupParticipantsUpdate` (absent: 200). */
  participantStatus = new Map<string, string>();
  /** What `groupInviteCode` and `groupAcceptInvite` answer (undefined: WhatsApp did not answer). */
  inviteCode: string | undefined = 'GROUPCODE123';
  joinedGroup: string | undefined = '120363000000000888@g.us';

  groupCreate = async (subject: string, participants: string[]): Promise<GroupMetadata> => {
    this.record('groupCreate', subject, participants);
    const id = '120363000000000777@g.us';
    this.groups[id] = {
      id,
      subject,
      owner: OWN_JID,
      creation: 1_700_000_000,
      participants: [{ id: OWN_JID, admin: 'superadmin' }, ...participants.map((p) => ({ id: p, admin: null }))],
    };
    return this.groups[id];
  };
  /** An unknown group is WhatsApp's IQ error 404, as Baileys raises it (the code in `data`). */
  groupMetadata = async (jid: string): Promise<GroupMetadata> => {
    this.record('groupMetadata', jid);
    const meta = this.groups[jid];
    if (!meta) throw Object.assign(new Error('item-not-found'), { output: { statusCode: 500 }, data: 404 });
    return meta;
  };
  groupUpdateSubject = async (jid: string, subject: string): Promise<void> =>
    this.record('groupUpdateSubject', jid, subject);
  groupUpdateDescription = async (jid: string, description?: string): Promise<void> =>
    this.record('groupUpdateDescription', jid, description);
  groupSettingUpdate = async (jid: string, setting: string): Promise<void> =>
    this.record('groupSettingUpdate', jid, setting);
  groupMemberAddMode = async (jid: string, mode: string): Promise<void> => this.record('groupMemberAddMode', jid, mode);
  groupJoinApprovalMode = async (jid: string, mode: string): Promise<void> =>
    this.record('groupJoinApprovalMode', jid, mode);
  /** Answers as WhatsApp does: a `<participant>` per contact, a 403 carrying an `<add_request>` invite code. */
  groupParticipantsUpdate = async (jid: string, participants: string[], action: string) => {
    this.record('groupParticipantsUpdate', jid, participants, action);
    return participants.map((p) => {
      const status = this.participantStatus.get(p) ?? '200';
      const addRequest = { tag: 'add_request', attrs: { code: `ADD-${p.slice(0, 4)}`, expiration: '1760000000' } };
      return {
        status,
        jid: p,
        content: {
          tag: 'participant',
          attrs: { jid: p, ...(status === '200' ? {} : { error: status }) },
          ...(status === '403' ? { content: [addRequest] } : {}),
        },
      };
    });
  };
  groupInviteCode = async (jid: string): Promise<string | undefined> => {
    this.record('groupInviteCode', jid);
    return this.inviteCode;
  };
  groupRevokeInvite = async (jid: string): Promise<string | undefined> => {
    this.record('groupRevokeInvite', jid);
    return 'RESETCODE456';
  };
  groupAcceptInvite = async (code: string): Promise<string | undefined> => {
    this.record('groupAcceptInvite', code);
    return this.joinedGroup;
  };
  groupLeave = async (jid: string): Promise<void> => this.record('groupLeave', jid);
  /** The `<requested_participant>` attributes `groupRequestParticipantsList` answers. */
  joinRequests: Record<string, string>[] = [];
  groupRequestParticipantsList = async (jid: string): Promise<Record<string, string>[]> => {
    this.record('groupRequestParticipantsList', jid);
    return this.joinRequests;
  };
  /** Answers 200 for a pending request, 404 for anyone else, as WhatsApp does. */
  groupRequestParticipantsUpdate = async (jid: string, participants: string[], action: 'approve' | 'reject') => {
    this.record('groupRequestParticipantsUpdate', jid, participants, action);
    return participants.map((p) => ({
      status: this.joinRequests.some((r) => r.jid === p) ? '200' : '404',
      jid: p,
    }));
  };

  signalRepository = {
    lidMapping: {
      getLIDForPN: async (pn: string): Promise<string | null> => {
        this.record('getLIDForPN', pn);
        return '777000111@lid';
      },
    },
  };
}

/** Records each socket it makes, and the order of creations and `end` calls across them. */
export class FakeSocketFactory {
  readonly sockets: FakeSocket[] = [];
  readonly order: string[] = [];

  make: SocketFactory = (config) => {
    const sock = new FakeSocket(this.sockets.length + 1, config, this.order);
    this.order.push(`create:${sock.index}`);
    this.sockets.push(sock);
    return sock as unknown as BaileysSocket;
  };

  get last(): FakeSocket {
    const sock = this.sockets.at(-1);
    if (!sock) throw new Error('no socket was created');
    return sock;
  }
}
