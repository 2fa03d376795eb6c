import { UnavailableError } from '../../errors.js';
import type { CommunityInfo, CommunityOps } from '../ops/channel-ops.js';
import type { BaileysSocket } from './socket-port.js';

/** Communities through Baileys: not mapped yet. */
export class BaileysCommunities implements CommunityOps {
  constructor(private readonly socket: () => BaileysSocket) {}

  async create(): Promise<CommunityInfo> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map communities yet');
  }

  async list(): Promise<CommunityInfo[]> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map communities yet');
  }

  async linkGroup(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map communities yet');
  }

  async unlinkGroup(): Promise<void> {
    this.socket();
    throw new UnavailableError('The baileys driver does not map communities yet');
  }
}
