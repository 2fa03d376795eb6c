import type { Transport } from '../transport/transport.js';
import type { MsgNetDriverName } from '../config/config.js';
import type { MsgNetDriver } from './msgnet-driver.js';
import { SandboxDriver } from './sandbox/sandbox-driver.js';

/**
 * The driver MSGNET_DRIVER names. Baileys is loaded only when chosen (it is large); `allowPrivateUrls`
 * (ALLOW_PRIVATE_URLS) lets it dial proxies on internal networks.
 */
export async function createDriver(
  name: MsgNetDriverName,
  transport: Transport,
  options: { allowPrivateUrls: boolean },
): Promise<MsgNetDriver> {
  if (name === 'sandbox') return new SandboxDriver(transport);
  const { BaileysDriver } = await import('./baileys/baileys-driver.js');
  return new BaileysDriver({ allowPrivateUrls: options.allowPrivateUrls });
}
