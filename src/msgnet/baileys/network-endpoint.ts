import { Agent as HttpsAgent } from 'node:https';
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import { Agent as UndiciAgent } from 'undici';
import type { WhatsAppEndpointConfig } from '../../config/whatsapp-endpoint.js';

/**
 * What a socket needs to reach a WhatsApp that is not WhatsApp itself (a simulator): its chat URL,
 * an upload agent and a download dispatcher that trust its media certificate, and a header naming the
 * node (the simulator's observer labels connections with it).
 */
export interface NetworkEndpoint {
  wsUrl: string;
  fetchAgent: HttpsAgent;
  /** Baileys' `options`: the download dispatcher and the node header. */
  fetchOptions: RequestInit;
  /** The same, naming the owner's epoch too (for the simulator's observer of stale side effects). */
  labelled(epoch: number | undefined): RequestInit;
  close(): Promise<void>;
}

/**
 * Trusts the simulator's noise root in place of WhatsApp's. Baileys checks the server's certificate
 * chain against `WA_CERT_DETAILS.PUBLIC_KEY`, one value per process: a node talks either to WhatsApp or
 * to one simulator (config refuses the simulator's variables for anything but internal addresses).
 */
export function simulatorEndpoint(config: WhatsAppEndpointConfig, nodeLabel: string): NetworkEndpoint {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(config.certRoot);
  const dispatcher = new UndiciAgent({ connect: { ca: config.mediaCa } });
  const fetchAgent = new HttpsAgent({ ca: config.mediaCa, keepAlive: true });
  // undici's own Dispatcher type and the one Node's fetch types name differ only in their package.
  const options = (headers: Record<string, string>) => ({ dispatcher, headers }) as unknown as RequestInit;
  return {
    wsUrl: config.wsUrl,
    fetchAgent,
    fetchOptions: options({ 'x-switchboard-node': nodeLabel }),
    labelled: (epoch) =>
      options({
        'x-switchboard-node': nodeLabel,
        ...(epoch === undefined ? {} : { 'x-switchboard-epoch': String(epoch) }),
      }),
    async close() {
      fetchAgent.destroy();
      await dispatcher.close();
    },
  };
}
