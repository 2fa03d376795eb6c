import type { PrivacyField, PrivacyOps, PrivacySettings } from '../ops/privacy-ops.js';
import type { SandboxNet } from './sandbox-net.js';

/** The phone's privacy settings, in the session store (a new account has every value `all`). */
export class SandboxPrivacy implements PrivacyOps {
  constructor(private readonly net: SandboxNet) {}

  async get(): Promise<PrivacySettings> {
    this.net.me();
    return this.net.phone.privacy();
  }

  async set(field: PrivacyField, value: string): Promise<void> {
    const current = await this.get();
    this.net.failIf(`setPrivacy:${field}`);
    await this.net.phone.savePrivacy({ ...current, [field]: value });
  }
}
