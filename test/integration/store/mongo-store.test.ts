import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoStore } from '../../../src/store/mongo/mongo-store.js';
import { storeContract } from './store-contract.js';

// MongoDB cannot be installed on every machine that runs the suite, so this contract run needs a server
// given by MONGO_URL (as the README says); the SQLite run of the same contract always happens.
const mongoUrl = process.env.MONGO_URL;

(mongoUrl ? describe : describe.skip)('MongoStore (runs when MONGO_URL is set)', () => {
  const databases: string[] = [];

  after(async () => {
    const client = await MongoClient.connect(mongoUrl!);
    for (const db of databases) await client.db(db).dropDatabase();
    await client.close();
  });

  storeContract(async () => {
    const db = `switchboard_test_${randomUUID().slice(0, 8)}`;
    databases.push(db);
    return MongoStore.connect(mongoUrl!, db);
  });
});
