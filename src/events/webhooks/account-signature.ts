import { createHmac } from 'node:crypto';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { Store } from '../../store/store.js';

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes with the account's secret (spec section 5). */
export function signatureHeader(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The current signing secret of an account's webhook, or undefined when it has none. */
export interface AccountSecretSource {
  secretFor(accountId: string): Promise<string | undefined>;
}

/** Reads the sealed secret from the store at each call: a rotation made on any node applies at once. */
export function storeSecretSource(store: Store, secrets: SecretBox): AccountSecretSource {
  return {
    async secretFor(accountId) {
      const webhook = await store.accountWebhooks.get(accountId);
      return webhook ? secrets.open(webhook.secretSealed, SecretPurpose.AccountWebhookSecret) : undefined;
    },
  };
}
