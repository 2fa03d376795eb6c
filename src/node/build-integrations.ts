import type { Logger } from 'pino';
import type { InstanceExtensionFactory } from '../actors/instance-extension.js';
import { actorCaller } from '../cluster/actor-caller.js';
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { Config } from '../config/config.js';
import { chatbotExtension } from '../integrations/chatbot/chatbot-extension.js';
import { ChatbotService } from '../integrations/chatbot/chatbot-service.js';
import { TypebotClient } from '../integrations/chatbot/typebot-client.js';
import { helpdeskExtension } from '../integrations/helpdesk/helpdesk-extension.js';
import { HelpdeskService } from '../integrations/helpdesk/helpdesk-service.js';
import { sandboxExtension } from '../integrations/sandbox/sandbox-extension.js';
import type { MsgNetDriver } from '../msgnet/msgnet-driver.js';
import type { SecretBox } from '../security/secret-box.js';
import type { Store } from '../store/store.js';

export interface NodeIntegrations {
  /** Undefined when CHATBOT_ENABLED is off. */
  chatbot: ChatbotService | undefined;
  /** Undefined when HELPDESK_ENABLED is off. */
  helpdesk: HelpdeskService | undefined;
  /** Every extension of the instance actors, each only where its module (or driver) is on. */
  extensions: InstanceExtensionFactory[];
}

/** The modules beside messaging: the chatbot (Typebot), the helpdesk bridge (Chatwoot), the sandbox controls. */
export function buildIntegrations(deps: {
  config: Config;
  store: Store;
  runtime: ClusterRuntime;
  secrets: SecretBox;
  driver: MsgNetDriver;
  logger: Logger;
  publicBaseUrl: () => string;
}): NodeIntegrations {
  const { config, store, secrets, logger, publicBaseUrl } = deps;
  const chatbot = config.chatbot.enabled
    ? new ChatbotService({ store, allowPrivateUrls: config.allowPrivateUrls, log: logger.child({ module: 'chatbot' }) })
    : undefined;
  const typebot = new TypebotClient({ timeoutMs: config.chatbot.timeoutMs, allowPrivateUrls: config.allowPrivateUrls });
  const helpdesk = config.helpdesk.enabled
    ? new HelpdeskService({
        store,
        secrets,
        actors: actorCaller(deps.runtime.router, config.cluster.callTimeoutMs),
        allowPrivateUrls: config.allowPrivateUrls,
        publicBaseUrl,
        log: logger.child({ module: 'helpdesk' }),
      })
    : undefined;
  const extensions: InstanceExtensionFactory[] = [
    ...(chatbot ? [chatbotExtension({ service: chatbot, client: typebot, media: config.media })] : []),
    ...(helpdesk
      ? [
          helpdeskExtension({
            secrets,
            options: config.helpdesk,
            media: config.media,
            allowPrivateUrls: config.allowPrivateUrls,
            publicBaseUrl,
          }),
        ]
      : []),
    ...(deps.driver.name === 'sandbox' ? [sandboxExtension()] : []),
  ];
  return { chatbot, helpdesk, extensions };
}
