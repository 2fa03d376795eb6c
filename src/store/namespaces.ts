/** Namespaces of instance-owned state. */

/** Messaging-network link: creds and signal keys (baileys), or the sandbox link. */
export const AUTH_NAMESPACE = 'auth';
