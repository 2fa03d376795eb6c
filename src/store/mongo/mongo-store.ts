import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { StartupError } from '../../errors.js';
import type { Db } from 'mongodb';
import type {
  AccountRepository,
  AccountWebhookRepository,
  BillingLedgerRepository,
  ChatbotRepository,
  InstanceRepository,
  MediaBlobRepository,
  MessageRepository,
  OwnedStateRepository,
  Store,
  WebhookRepository,
} from '../store.js';
import { startMessagePruning } from '../message-retention.js';
import { MongoAccountWebhooks, MongoBillingLedger } from './mongo-billing.js';
import { MongoChatbots } from './mongo-chatbots.js';
import { MongoDeliveries } from './mongo-deliveries.js';
import { MongoMediaBlobs } from './mongo-media-blobs.js';
import { MongoMessages } from './mongo-messages.js';
import { guardOutages } from '../store-outage.js';
import { isMongoOutage } from './mongo-outage.js';

import { MongoAccounts } from './mongo-accounts.js';
import { MongoInstances } from './mongo-instances.js';
import { MongoWebhooks } from './mongo-webhooks.js';
import { MongoOwnedState } from './mongo-owned-state.js';
import { MongoRunnableVersion } from './mongo-runnable-version.js';
import type { AccountDoc, InstanceDoc, OwnedStateDoc, WebhookDoc } from './mongo-docs.js';

/** The hosts of a connection string, without credentials, for messages. */
function mongoHost(url: string): string {
  return /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]+)/.exec(url)?.[1] ?? 'the configured address';
}

/**
 * MongoDB store (official driver), on a replica set: every multi-document change (a fenced owned write,
 * instance creation and deletion) is one transaction, so the fencing rule is the same sentence as for
 * SQLite: the epoch check and the write commit together or not at all.
 */
export class MongoStore implements Store {
  readonly kind = 'mongo' as const;
  readonly accounts: AccountRepository;
  readonly instances: InstanceRepository;
  readonly webhooks: WebhookRepository;
  readonly ownedState: OwnedStateRepository;
  readonly deliveries: MongoDeliveries;
  readonly messages: MessageRepository;
  readonly accountWebhooks: AccountWebhookRepository;
  readonly billingLedger: BillingLedgerRepository;
  readonly mediaBlobs: MediaBlobRepository;
  readonly chatbots: ChatbotRepository;
  readonly #client: MongoClient;
  readonly #db: Db;
  #stopPruning: () => void = () => undefined;

  private constructor(client: MongoClient, db: Db) {
    this.#client = client;
    this.#db = db;
    const accounts = db.collection<AccountDoc>('accounts');
    const instances = db.collection<InstanceDoc>('instances');
    const webhooks = db.collection<WebhookDoc>('webhooks');
    const ownedState = db.collection<OwnedStateDoc>('owned_state');
    const deliveries = new MongoDeliveries(client, db);
    const messages = new MongoMessages(db);
    const mediaBlobs = new MongoMediaBlobs(db);
    const chatbots = new MongoChatbots(db);
    const runnable = new MongoRunnableVersion(db);
    // Repositories hand each other the plain objects; what the node sees answers outages as 503.
    const guard = <R extends object>(repository: R) => guardOutages(repository, isMongoOutage);
    this.accounts = guard(new MongoAccounts(client, accounts, instances, db, runnable));
    this.deliveries = guard(deliveries);
    this.messages = guard(messages);
    this.accountWebhooks = guard(new MongoAccountWebhooks(db));
    this.billingLedger = guard(new MongoBillingLedger(db));
    this.mediaBlobs = guard(mediaBlobs);
    this.chatbots = guard(chatbots);
    this.instances = guard(
      new MongoInstances(
        client,
        accounts,
        instances,
        webhooks,
        ownedState,
        deliveries,
        messages,
        mediaBlobs,
        chatbots,
        runnable,
      ),
    );
    this.webhooks = guard(new MongoWebhooks(client, webhooks));
    this.ownedState = guard(new MongoOwnedState(client, instances, ownedState, runnable));
  }

  /** `messageRetentionDays` > 0 prunes the history about every hour. */
  /**
   * Connects, retrying for `connectTimeoutMs` (one log line per attempt), then checks that the server is
   * a replica-set member: every multi-document change runs in a transaction, which needs one.
   * @throws StartupError 69 when MongoDB stays unreachable, 78 when it is a standalone server
   */
  static async connect(
    url: string,
    dbName: string,
    options: {
      messageRetentionDays?: number;
      connectTimeoutMs?: number;
      serverSelectionTimeoutMs?: number;
      log?: Logger;
    } = {},
  ): Promise<MongoStore> {
    const host = mongoHost(url);
    const deadline = Date.now() + (options.connectTimeoutMs ?? 0);
    for (let attempt = 1; ; attempt++) {
      // ignoreUndefined false: absent optional fields are kept as null so record keys round-trip.
      const client = new MongoClient(url, {
        serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? 5000,
        ignoreUndefined: false,
        // An acknowledged write is on a majority of the replica set's journals: a failover cannot roll it back.
        writeConcern: { w: 'majority', journal: true },
      });
      try {
        await client.connect();
        const hello = await client.db('admin').command({ hello: 1 });
        if (typeof hello.setName !== 'string') {
          throw new StartupError(
            `MongoDB at ${host} is a standalone server; transactions need a replica set (a single-node one is ` +
              'enough: start mongod with --replSet rs0 and run rs.initiate() once)',
            78,
          );
        }
        const store = new MongoStore(client, client.db(dbName));
        await store.#createIndexes();
        store.#stopPruning = startMessagePruning(store.messages, options.messageRetentionDays ?? 0);
        return store;
      } catch (err) {
        await client.close().catch(() => undefined);
        if (err instanceof StartupError) throw err;
        const cause = err instanceof Error ? err.message : String(err);
        if (Date.now() >= deadline) throw new StartupError(`cannot reach MongoDB at ${host}: ${cause}`, 69);
        options.log?.warn({ attempt, host, cause }, 'MongoDB not reachable yet; retrying');
        await sleep(Math.min(2000, 250 * attempt));
      }
    }
  }

  async #createIndexes(): Promise<void> {
    const db = this.#db;
    await db.collection('accounts').createIndexes([
      { key: { name: 1 }, name: 'name', unique: true },
      { key: { tokenHash: 1 }, name: 'tokenHash', unique: true },
    ]);
    await db.collection('instances').createIndexes([
      { key: { accountId: 1, name: 1 }, name: 'accountId_name', unique: true },
      { key: { tokenHash: 1 }, name: 'tokenHash', unique: true },
      { key: { name: 1 }, name: 'name' },
    ]);
    await db
      .collection('webhooks')
      .createIndexes([{ key: { instanceId: 1, createdAt: 1, label: 1 }, name: 'instanceId' }]);
    await db
      .collection('owned_state')
      .createIndexes([
        { key: { instanceId: 1, namespace: 1, key: 1 }, name: 'instanceId_namespace_key', unique: true },
      ]);
    await MongoDeliveries.createIndexes(db);
    await MongoMessages.createIndexes(db);
    await MongoBillingLedger.createIndexes(db);
    await MongoMediaBlobs.createIndexes(db);
    await MongoChatbots.createIndexes(db);
    await MongoRunnableVersion.prepare(db);
  }

  async ping(): Promise<void> {
    await this.#db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    this.#stopPruning();
    await this.#client.close();
  }
}
