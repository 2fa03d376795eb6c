import type { ChatwootClient } from './chatwoot-client.js';

/**
 * The API-channel inbox named `name`: reused when the account has one (its webhook URL pointed at us if
 * it points elsewhere), created otherwise. A creation that timed out is found by the next attempt.
 * Returns the inbox id.
 */
export async function ensureInbox(
  client: ChatwootClient,
  name: string,
  webhookUrl: string,
  signal?: AbortSignal,
): Promise<number> {
  return client.retrying(async () => {
    const existing = (await client.listInboxes(signal)).find(
      (i) => i.name === name && (i.channel_type ?? 'Channel::Api') === 'Channel::Api',
    );
    if (existing) {
      if (existing.webhook_url !== webhookUrl) await client.setInboxWebhook(existing.id, webhookUrl, signal);
      return existing.id;
    }
    return (await client.createApiInbox(name, webhookUrl, signal)).id;
  }, signal);
}
