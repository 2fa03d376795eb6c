import { UnavailableError } from '../../errors.js';
import type { SentMessage } from '../msgnet-driver.js';
import type { ChannelInfo, ChannelOps } from '../ops/channel-ops.js';
import type { BaileysSocket } from './socket-port.js';

/** Channels through Baileys: not mapped yet. */
export class BaileysChannels implements ChannelOps {
  constructor(private readonly socket: () => BaileysSocket) {}

  async create(): Promise<ChannelInfo> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }

  async list(): Promise<ChannelInfo[]> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }

  async info(): Promise<ChannelInfo> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }

  async publish(): Promise<SentMessage> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }

  async follow(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }

  async unfollow(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map channels yet');
  }
}
