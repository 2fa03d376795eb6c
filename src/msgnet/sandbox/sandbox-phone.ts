import { randomInt } from 'node:crypto';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { AuthStore, ChatLabels, GroupInfo, LabelInfo, OutgoingMedia, PrivacySettings } from '../msgnet-driver.js';
import { parseAddress } from '../jid.js';
import { NEW_GROUP_SETTINGS } from '../ops/group-ops.js';
import type { OutboxMedia, SandboxGroup } from './sandbox-wire.js';
import { newInviteCode } from './sandbox-invite-code.js';

export const USER_DOMAIN = 's.whatsapp.net';
/** Newly created accounts have every value `all` (spec 2). */
const DEFAULT_PRIVACY: PrivacySettings = {
  lastSeen: 'all',
  online: 'all',
  profile: 'all',
  status: 'all',
  readReceipts: 'all',
  callAdd: 'all',
  groupAdd: 'all',
};

/** `5511999998888` or a JID → the JID (the shared rule of msgnet/jid.ts); `status@broadcast` passes through. */
export function toJid(number: string): string {
  const n = number.trim();
  if (n === 'status@broadcast') return n;
  const jid = parseAddress(n);
  if (jid === undefined) throw new ValidationError(`Invalid number: ${number}`);
  return jid;
}

/** The phone's own profile (GET /api/sandbox/profile). */
export interface SandboxProfile {
  name?: string;
  status?: string;
  /** The JPEG the network holds, base64; null once removed. */
  picture?: string | null;
}

/** Media as the outbox records it: its description and size, never its bytes. */
export function outboxMedia(media: OutgoingMedia): OutboxMedia {
  return {
    kind: media.kind,
    mimetype: media.mimetype,
    size: media.data.length,
    ...(media.fileName ? { fileName: media.fileName } : {}),
    ...(media.caption ? { caption: media.caption } : {}),
    ...(media.seconds !== undefined ? { seconds: media.seconds } : {}),
    ...(media.ptt !== undefined ? { ptt: media.ptt } : {}),
    ...(media.waveform ? { waveform: [...media.waveform] } : {}),
  };
}

/**
 * What the simulated phone has, kept in the session store (instance-owned, fenced) so that it survives a
 * failover: groups (`group:<jid>`), chat labels (`labels:<chat>`), the account's label names
 * (`labelname:<id>`), the profile and the privacy settings.
 */
export class SandboxPhone {
  constructor(private readonly auth: AuthStore) {}

  async addGroup(
    me: string,
    subject: string,
    description: string,
    participants: { number: string; admin?: boolean }[],
  ): Promise<SandboxGroup> {
    const group: SandboxGroup = {
      jid: `120363${String(randomInt(10 ** 12)).padStart(12, '0')}@g.us`,
      subject,
      description,
      creatorJid: me,
      participants: [
        { jid: me, admin: 'superadmin' },
        ...participants.map((p) => ({ jid: toJid(p.number), admin: p.admin ? ('admin' as const) : null })),
      ],
      settings: { ...NEW_GROUP_SETTINGS },
      inviteCode: '',
      createdAt: Date.now(),
      picture: null,
    };
    group.inviteCode = newInviteCode(group.jid);
    await this.auth.set({ [`group:${group.jid}`]: JSON.stringify(group) });
    return group;
  }

  async groups(includeMembers: boolean): Promise<GroupInfo[]> {
    return [...(await this.auth.list('group:')).values()].map((raw) => {
      const g = JSON.parse(raw) as SandboxGroup;
      return {
        jid: g.jid,
        name: g.subject,
        description: g.description,
        creatorJid: g.creatorJid,
        memberCount: g.participants.length,
        ...(includeMembers
          ? {
              members: g.participants.map((p) => ({
                jid: p.jid,
                isAdmin: p.admin !== null,
                isSuperAdmin: p.admin === 'superadmin',
              })),
            }
          : {}),
      };
    });
  }

  async setChatLabels(chatJid: string, labels: LabelInfo[]): Promise<void> {
    await this.auth.set({
      [`labels:${chatJid}`]: labels.length ? JSON.stringify(labels) : null,
      // Labels the phone creates become the account's, also once no chat carries them.
      ...Object.fromEntries(labels.map((l) => [`labelname:${l.id}`, l.name])),
    });
  }

  async chatLabels(): Promise<ChatLabels[]> {
    return [...(await this.auth.list('labels:')).entries()].map(([key, raw]) => ({
      chatJid: key.slice('labels:'.length),
      labels: JSON.parse(raw) as LabelInfo[],
    }));
  }

  async labels(): Promise<LabelInfo[]> {
    return [...(await this.auth.list('labelname:')).entries()].map(([key, name]) => ({
      id: key.slice('labelname:'.length),
      name,
    }));
  }

  /** Creates (or renames) a label of the account. */
  async defineLabel(id: string, name: string): Promise<void> {
    await this.auth.set({ [`labelname:${id}`]: name });
  }

  /** Deletes a label and takes it off every chat; the chats it left, each with the label. */
  async deleteLabel(id: string): Promise<{ chatJid: string; label: LabelInfo }[]> {
    const name = await this.auth.get(`labelname:${id}`);
    if (name === undefined) throw new NotFoundError(`Label not found: ${id}`);
    const changes: Record<string, string | null> = { [`labelname:${id}`]: null };
    const left: { chatJid: string; label: LabelInfo }[] = [];
    for (const { chatJid, labels } of await this.chatLabels()) {
      if (!labels.some((l) => l.id === id)) continue;
      const after = labels.filter((l) => l.id !== id);
      changes[`labels:${chatJid}`] = after.length ? JSON.stringify(after) : null;
      left.push({ chatJid, label: { id, name } });
    }
    await this.auth.set(changes);
    return left;
  }

  /** Adds or removes labels on a chat; returns its labels after and those that changed. */
  async assignLabels(
    chatJid: string,
    labelIds: string[],
    add: boolean,
  ): Promise<{ after: LabelInfo[]; changed: LabelInfo[] }> {
    const known = new Map((await this.labels()).map((l) => [l.id, l]));
    const unknown = labelIds.find((id) => !known.has(id));
    if (unknown !== undefined) throw new NotFoundError(`Label not found: ${unknown}`);
    const current = JSON.parse((await this.auth.get(`labels:${chatJid}`)) ?? '[]') as LabelInfo[];
    const changed = [...new Set(labelIds)]
      .filter((id) => current.some((l) => l.id === id) !== add)
      .map((id) => known.get(id)!);
    const after = add ? [...current, ...changed] : current.filter((l) => !labelIds.includes(l.id));
    if (changed.length) await this.auth.set({ [`labels:${chatJid}`]: after.length ? JSON.stringify(after) : null });
    return { after, changed };
  }

  async profile(): Promise<SandboxProfile> {
    return JSON.parse((await this.auth.get('profile')) ?? '{}') as SandboxProfile;
  }

  async saveProfile(profile: SandboxProfile): Promise<void> {
    await this.auth.set({ profile: JSON.stringify(profile) });
  }

  async privacy(): Promise<PrivacySettings> {
    return {
      ...DEFAULT_PRIVACY,
      ...(JSON.parse((await this.auth.get('privacy')) ?? '{}') as Partial<PrivacySettings>),
    };
  }

  async savePrivacy(settings: PrivacySettings): Promise<void> {
    await this.auth.set({ privacy: JSON.stringify(settings) });
  }
}
