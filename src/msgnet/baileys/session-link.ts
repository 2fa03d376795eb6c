import type { Logger } from 'pino';
import type { AuthStore } from '../msgnet-driver.js';
import { BaileysAuth } from './baileys-auth-state.js';
import type { BaileysAuthHooks } from './baileys-auth-state.js';
import { ContactBook } from './contact-book.js';
import { LabelBook } from './label-book.js';
import { PollBook } from './poll-book.js';
import { SentMessages } from './sent-messages.js';
import { StatusAudience } from './status-audience.js';

/** Everything a session keeps about its link in the `AuthStore`, loaded together and forgotten together. */
export interface SessionLink {
  auth: BaileysAuth;
  labels: LabelBook;
  audience: StatusAudience;
  /** The address book synced from the phone. */
  contacts: ContactBook;
  polls: PollBook;
  /** What this session sent, for a recipient's device that asks for a message again after a failover. */
  sent: SentMessages;
}

export async function loadSessionLink(store: AuthStore, log: Logger, hooks: BaileysAuthHooks): Promise<SessionLink> {
  const auth = await BaileysAuth.load(store, hooks);
  const [labels, audience, polls, contacts, sent] = await Promise.all([
    LabelBook.load(auth, log),
    StatusAudience.load(auth, log),
    PollBook.load(auth, log),
    ContactBook.load(auth, log),
    SentMessages.load(auth, log),
  ]);
  return { auth, labels, audience, polls, contacts, sent };
}
