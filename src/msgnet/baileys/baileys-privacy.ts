import type { PrivacyField, PrivacyOps, PrivacySettings } from '../ops/privacy-ops.js';
import { getPrivacy, setPrivacy } from './outgoing.js';
import type { BaileysSocket } from './socket-port.js';

/** Privacy settings through Baileys' privacy queries. */
export class BaileysPrivacy implements PrivacyOps {
  constructor(private readonly socket: () => BaileysSocket) {}

  async get(): Promise<PrivacySettings> {
    return getPrivacy(this.socket());
  }

  async set(field: PrivacyField, value: string): Promise<void> {
    return setPrivacy(this.socket(), field, value);
  }
}
