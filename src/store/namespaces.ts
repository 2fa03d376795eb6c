/** Namespaces of instance-owned state. */

/** Messaging-network link: creds and signal keys (baileys), or the sandbox link. */
export const AUTH_NAMESPACE = 'auth';

/** What the instance last applied to its profile (picture digest, About text), to tell what a change changed. */
export const PROFILE_NAMESPACE = 'profile';

/** Chatbot conversations: sessions, debounce buffers, operator markers and each bot's last activity. */
export const CHATBOT_NAMESPACE = 'chatbot';
