import { randomBytes, randomInt } from 'node:crypto';
import type { Account } from './directory.js';

export type GroupRole = 'member' | 'admin' | 'superadmin';

/** A group as the server keeps it; members are accounts (every linked device of a member gets its messages). */
export interface Group {
  jid: string;
  subject: string;
  subjectOwner: Account;
  subjectTime: number;
  creation: number;
  creator: Account;
  description: { id: string; text: string; owner: Account; time: number } | undefined;
  members: Map<Account, GroupRole>;
  announce: boolean;
  locked: boolean;
  ephemeral: number;
  memberAddMode: 'admin_add' | 'all_member_add';
  joinApproval: boolean;
  /** Join requests waiting for an admin (approval mode). */
  requests: Map<Account, number>;
  inviteCode: string;
}

export class GroupBook {
  readonly #groups = new Map<string, Group>();

  create(subject: string, creator: Account, members: Account[]): Group {
    let jid: string;
    do jid = `${creator.number.slice(0, 6)}${randomInt(100_000_000, 999_999_999)}@g.us`;
    while (this.#groups.has(jid));
    const now = Math.floor(Date.now() / 1000);
    const group: Group = {
      jid,
      subject,
      subjectOwner: creator,
      subjectTime: now,
      creation: now,
      creator,
      description: undefined,
      members: new Map([[creator, 'superadmin']]),
      announce: false,
      locked: false,
      ephemeral: 0,
      memberAddMode: 'admin_add',
      joinApproval: false,
      requests: new Map(),
      inviteCode: newInviteCode(),
    };
    for (const m of members) if (m !== creator) group.members.set(m, 'member');
    this.#groups.set(jid, group);
    return group;
  }

  get(jid: string | undefined): Group | undefined {
    return jid ? this.#groups.get(jid) : undefined;
  }

  byInvite(code: string): Group | undefined {
    for (const g of this.#groups.values()) if (g.inviteCode === code) return g;
    return undefined;
  }

  of(account: Account): Group[] {
    return [...this.#groups.values()].filter((g) => g.members.has(account));
  }

  all(): Group[] {
    return [...this.#groups.values()];
  }
}

export function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

export function isAdmin(group: Group, account: Account): boolean {
  const role = group.members.get(account);
  return role === 'admin' || role === 'superadmin';
}
