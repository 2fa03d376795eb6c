import { UnavailableError } from '../../errors.js';
import type { SentMessage } from '../msgnet-driver.js';
import type { ChannelInfo, ChannelOps } from '../ops/channel-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';

/** The simulated network's channels: not modelled yet. */
export class SandboxChannels implements ChannelOps, SandboxOps {
  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    return [];
  }

  onWire(): void {}

  async create(): Promise<ChannelInfo> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }

  async list(): Promise<ChannelInfo[]> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }

  async info(): Promise<ChannelInfo> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }

  async publish(): Promise<SentMessage> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }

  async follow(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }

  async unfollow(): Promise<void> {
    this.net.me();
    throw new UnavailableError('The sandbox does not model channels yet');
  }
}
