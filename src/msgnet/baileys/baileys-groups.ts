import { UnavailableError } from '../../errors.js';
import type { GroupDetails, GroupOps, ParticipantResult } from '../ops/group-ops.js';
import type { BaileysSocket } from './socket-port.js';

/** Groups through Baileys: not mapped yet. */
export class BaileysGroups implements GroupOps {
  constructor(private readonly socket: () => BaileysSocket) {}

  async create(): Promise<GroupDetails> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async info(): Promise<GroupDetails> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async update(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async participants(): Promise<ParticipantResult[]> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async inviteCode(): Promise<string> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async resetInviteCode(): Promise<string> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async join(): Promise<string> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }

  async leave(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map groups yet');
  }
}
