import { UnavailableError } from '../../errors.js';
import type { GroupDetails, GroupOps, ParticipantResult } from '../ops/group-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';

/** The simulated network's groups: not modelled yet. */
export class SandboxGroups implements GroupOps, SandboxOps {
  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    return [];
  }

  onWire(): void {}

  async create(): Promise<GroupDetails> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async info(): Promise<GroupDetails> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async update(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async participants(): Promise<ParticipantResult[]> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async inviteCode(): Promise<string> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async resetInviteCode(): Promise<string> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async join(): Promise<string> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }

  async leave(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model groups yet');
  }
}
