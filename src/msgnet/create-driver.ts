import type { Transport } from '../transport/transport.js';
import type { MsgNetDriverName } from '../config/config.js';
import type { WhatsAppEndpointConfig } from '../config/whatsapp-endpoint.js';
import type { MsgNetDriver } from './msgnet-driver.js';
import { SandboxDriver } from './sandbox/sandbox-driver.js';

/**
 * The driver MSGNET_DRIVER names. Baileys is loaded only when chosen (it is large); `allowPrivateUrls`
 * (ALLOW_PRIVATE_URLS) lets it dial proxies on internal networks; its logins leave at `connectRatePerSecond`.
 */
export async function createDriver(
  name: MsgNetDriverName,
  transport: Transport,
  options: {
    allowPrivateUrls: boolean;
    whatsapp?: WhatsAppEndpointConfig | undefined;
    nodeId: string;
    /** CONNECT_RATE_PER_SECOND: logins per second at most (Baileys). */
    connectRatePerSecond?: number;
    /** True while the node's event loop is too far behind for another login (Baileys). */
    overloaded?: () => boolean;
  },
): Promise<MsgNetDriver> {
  if (name === 'sandbox') return new SandboxDriver(transport);
  const { BaileysDriver } = await import('./baileys/baileys-driver.js');
  return new BaileysDriver({
    allowPrivateUrls: options.allowPrivateUrls,
    ...(options.connectRatePerSecond ? { connectRatePerSecond: options.connectRatePerSecond } : {}),
    ...(options.overloaded ? { overloaded: options.overloaded } : {}),
    ...(options.whatsapp ? { simulator: { config: options.whatsapp, nodeLabel: options.nodeId } } : {}),
  });
}
