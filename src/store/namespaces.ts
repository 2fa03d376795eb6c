/** Namespaces of instance-owned state. */

/** Messaging-network link: creds and signal keys (baileys), or the sandbox link. */
export const AUTH_NAMESPACE = 'auth';

/** What the instance last applied to its profile (picture digest, About text), to tell what a change changed. */
export const PROFILE_NAMESPACE = 'profile';

/** The helpdesk bridge's cache: each chat's Chatwoot contact and conversation, each conversation's chat. */
export const HELPDESK_NAMESPACE = 'helpdesk';

/** Messages waiting to go to Chatwoot, and agent messages waiting to go to WhatsApp (in arrival order). */
export const HELPDESK_QUEUE_NAMESPACE = 'helpdesk-queue';

/** What the helpdesk bridge already handled, both ways, so that a retry or a redelivery does not repeat it. */
export const HELPDESK_SEEN_NAMESPACE = 'helpdesk-seen';

/** Chatbot conversations: sessions, debounce buffers, operator markers and each bot's last activity. */
export const CHATBOT_NAMESPACE = 'chatbot';

/** Each chat's state as the chat operations set it (archived, pinned, muted, blocked), by chat JID. */
export const CHATS_NAMESPACE = 'chats';

/** Calls the owner owes a rejection (autoRejectCalls), recorded before the network's offer is acked. */
export const CALL_REJECTIONS_NAMESPACE = 'call-rejections';

/** Polls the instance sent or received and their votes (each voter's latest choice), by poll message id. */
export const POLLS_NAMESPACE = 'polls';
