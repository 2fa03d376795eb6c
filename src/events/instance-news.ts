import type { Logger } from 'pino';
import { channels } from '../redis/keys.js';
import type { Transport } from '../transport/transport.js';
import { BusNews } from './bus-news.js';

/** An instance's stored record changed (settings, a configuration block, its connection, its token) or is gone. */
export interface InstanceChange {
  instanceId: string;
}

/** Instance record changes told to every node, so that their cached records (InstanceRecordCache) go at once. */
export class InstanceNews extends BusNews<InstanceChange> {
  constructor(transport: Transport, log: Logger) {
    super(transport, channels.instanceRecords(), log, 'instance change');
  }
}
