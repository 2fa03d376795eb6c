import { userJid } from './jids.js';
import type { BaileysSocket } from './socket-port.js';

/** Our own addresses: the sender of the messages we sent, and the creator or voter of our polls. */
export interface OwnIdentity {
  jid: string | undefined;
  lid: string | undefined;
  name: string | undefined;
}

/** Our own addresses, from the socket's user (`…:device@…` normalised). */
export function ownIdentity(sock: Pick<BaileysSocket, 'user'>): OwnIdentity {
  const user = sock.user;
  return {
    jid: user?.id ? userJid(user.id) : undefined,
    lid: user?.lid ? userJid(user.lid) : undefined,
    name: user?.name,
  };
}
