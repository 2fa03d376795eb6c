import { randomInt } from 'node:crypto';
import { NotFoundError } from '../../errors.js';
import type { AuthStore } from '../msgnet-driver.js';
import { NEW_GROUP_SETTINGS } from '../ops/group-ops.js';
import type { GroupDetails, ParticipantAction } from '../ops/group-ops.js';
import { GROUP_NOT_FOUND } from '../ops/group-texts.js';
import type { SandboxGroup } from './sandbox-wire.js';

const PREFIX = 'group:';
/** The code of a group stored before groups had invite codes, until an admin resets it. */
const LEGACY_SECRET = 'SandboxGroup';

export function newGroupJid(): string {
  return `120363${String(randomInt(10 ** 12)).padStart(12, '0')}@g.us`;
}

export type GroupRole = 'superadmin' | 'admin' | null;

/** A participant's role, or undefined when they are not in the group. */
export function roleOf(group: SandboxGroup, jid: string): GroupRole | undefined {
  return group.participants.find((p) => p.jid === jid)?.admin;
}

export function isAdmin(group: SandboxGroup, jid: string): boolean {
  const role = roleOf(group, jid);
  return role === 'admin' || role === 'superadmin';
}

/** Whether `jid` may change the members: admins always; anyone in it may add when the group lets members add. */
export function mayChange(group: SandboxGroup, jid: string, action: ParticipantAction): boolean {
  return isAdmin(group, jid) || (action === 'add' && group.settings.memberAdd && roleOf(group, jid) !== undefined);
}

/** The member who answers join requests: the superadmin, else the first admin (one phone, so one answer). */
export function answererOf(group: SandboxGroup): string | undefined {
  return (
    group.participants.find((p) => p.admin === 'superadmin')?.jid ??
    group.participants.find((p) => p.admin === 'admin')?.jid
  );
}

export function detailsOf(group: SandboxGroup): GroupDetails {
  return {
    jid: group.jid,
    subject: group.subject,
    description: group.description,
    pictureUrl: group.picture ? `data:image/jpeg;base64,${group.picture}` : null,
    ownerJid: group.creatorJid,
    createdAt: group.createdAt,
    settings: { ...group.settings },
    members: group.participants.map((p) => ({
      jid: p.jid,
      isAdmin: p.admin !== null,
      isSuperAdmin: p.admin === 'superadmin',
    })),
    communityJid: null,
  };
}

/** A stored group as the current shape has it (groups seeded by older builds lack the later fields). */
function normalized(raw: string): SandboxGroup {
  const stored = JSON.parse(raw) as Partial<SandboxGroup> & Pick<SandboxGroup, 'jid'>;
  return {
    subject: '',
    description: '',
    creatorJid: '',
    participants: [],
    inviteCode: `${LEGACY_SECRET}${stored.jid.replace(/@g\.us$/, '')}`,
    createdAt: 0,
    picture: null,
    ...stored,
    settings: { ...NEW_GROUP_SETTINGS, ...stored.settings },
  };
}

/** This phone's copies of its groups (`group:<jid>` in the session store, as `SandboxPhone.groups` reads them). */
export class SandboxGroupBook {
  constructor(private readonly auth: AuthStore) {}

  async get(jid: string): Promise<SandboxGroup | undefined> {
    const raw = await this.auth.get(`${PREFIX}${jid}`);
    return raw === undefined ? undefined : normalized(raw);
  }

  /** @throws NotFoundError when this phone is in no such group */
  async require(jid: string): Promise<SandboxGroup> {
    const group = await this.get(jid);
    if (!group) throw new NotFoundError(GROUP_NOT_FOUND);
    return group;
  }

  async save(group: SandboxGroup): Promise<void> {
    await this.auth.set({ [`${PREFIX}${group.jid}`]: JSON.stringify(group) });
  }

  async drop(jid: string): Promise<void> {
    await this.auth.set({ [`${PREFIX}${jid}`]: null });
  }

  async jids(): Promise<string[]> {
    return [...(await this.auth.list(PREFIX)).keys()].map((key) => key.slice(PREFIX.length));
  }
}
