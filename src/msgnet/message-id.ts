import { randomBytes } from 'node:crypto';

/** A new message id in WhatsApp's own form (`3EB0` and 16 hex digits), for sends that choose their id. */
export const newMessageId = (): string => `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
