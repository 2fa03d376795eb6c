import { UnavailableError } from '../../errors.js';
import type { CommunityInfo, CommunityOps } from '../ops/channel-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';

/** The simulated network's communities: not modelled yet. */
export class SandboxCommunities implements CommunityOps, SandboxOps {
  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    return [];
  }

  onWire(): void {}

  async create(): Promise<CommunityInfo> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model communities yet');
  }

  async list(): Promise<CommunityInfo[]> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model communities yet');
  }

  async linkGroup(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model communities yet');
  }

  async unlinkGroup(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model communities yet');
  }
}
