import type Database from 'better-sqlite3';

/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Append only: a
 * released migration is never edited.
 */
const MIGRATIONS: string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     token_hash TEXT NOT NULL UNIQUE,
     instance_quota INTEGER NOT NULL,
     allowed_origins TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE TABLE instances (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts (id),
     name TEXT NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     token_sealed TEXT NOT NULL,
     owner_epoch INTEGER NOT NULL DEFAULT 0,
     config TEXT NOT NULL,
     connection TEXT NOT NULL,
     created_at TEXT NOT NULL,
     UNIQUE (account_id, name)
   );
   CREATE INDEX instances_name ON instances (name);
   CREATE TABLE webhooks (
     instance_id TEXT NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
     label TEXT NOT NULL,
     enabled INTEGER NOT NULL,
     url TEXT NOT NULL,
     authorization_sealed TEXT,
     by_events INTEGER NOT NULL,
     events TEXT NOT NULL,
     base64 INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (instance_id, label)
   );
   CREATE TABLE owned_state (
     instance_id TEXT NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
     namespace TEXT NOT NULL,
     key TEXT NOT NULL,
     value TEXT NOT NULL,
     PRIMARY KEY (instance_id, namespace, key)
   );`,
  // 2: the embedded mode's durable webhook outbox (cluster mode uses Redis Streams).
  `CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     instance_id TEXT NOT NULL,
     status TEXT NOT NULL,
     due_at INTEGER NOT NULL,
     lease_until INTEGER NOT NULL DEFAULT 0,
     attempts INTEGER NOT NULL DEFAULT 0,
     payload TEXT NOT NULL,
     last_error TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, due_at);
   CREATE INDEX webhook_deliveries_instance ON webhook_deliveries (instance_id, status);`,
  // 3: the chat history (GET /api/chat/history), pruned by age.
  `CREATE TABLE messages (
     instance_id TEXT NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
     id TEXT NOT NULL,
     chat_jid TEXT NOT NULL,
     from_me INTEGER NOT NULL,
     sender_jid TEXT NOT NULL,
     timestamp INTEGER NOT NULL,
     type TEXT NOT NULL,
     text TEXT NOT NULL,
     media TEXT,
     PRIMARY KEY (instance_id, id)
   );
   CREATE INDEX messages_chat ON messages (instance_id, chat_jid, timestamp, id);
   CREATE INDEX messages_instance_time ON messages (instance_id, timestamp, id);
   CREATE INDEX messages_time ON messages (timestamp);`,
  // 4: where each message got to (GET /api/chat/status).
  `ALTER TABLE messages ADD COLUMN status TEXT;`,
  // 5: account webhooks (Enterprise events) and the billing ledger (one row per emitted billing event).
  `CREATE TABLE account_webhooks (
     account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
     url TEXT NOT NULL,
     events TEXT NOT NULL,
     enabled INTEGER NOT NULL,
     secret_sealed TEXT NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE billing_ledger (
     key TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     event TEXT NOT NULL,
     description TEXT NOT NULL,
     data TEXT NOT NULL,
     lease_until INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     sent_at TEXT
   );
   CREATE INDEX billing_ledger_unsent ON billing_ledger (sent_at, lease_until);
   CREATE INDEX billing_ledger_account ON billing_ledger (account_id, created_at);`,
  // 6: received media kept for base64 webhook deliveries and GET /api/chat/media, until they expire.
  `CREATE TABLE media_blobs (
     instance_id TEXT NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
     message_id TEXT NOT NULL,
     data BLOB NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (instance_id, message_id)
   );
   CREATE INDEX media_blobs_expiry ON media_blobs (expires_at);`,
  // 7: chatbot bots (unique trigger key per instance) and each instance's integration link.
  `CREATE TABLE chatbot_bots (
     instance_id TEXT NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
     bot_id TEXT NOT NULL,
     trigger_key TEXT,
     bot TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (instance_id, bot_id)
   );
   CREATE UNIQUE INDEX chatbot_bots_trigger ON chatbot_bots (instance_id, trigger_key) WHERE trigger_key IS NOT NULL;
   CREATE TABLE chatbot_links (
     instance_id TEXT PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
     link TEXT NOT NULL
   );`,
  // 8: accounts an operator disabled (their tokens refused, their instances stopped).
  `ALTER TABLE accounts ADD COLUMN disabled_at TEXT;`,
  // 9: the client's label of a sent message (the send's `source`).
  `ALTER TABLE messages ADD COLUMN source TEXT;`,
  // 10: the node holding each instance (its node lease's token), read before an instance is taken over.
  `ALTER TABLE instances ADD COLUMN owner_node TEXT;
   ALTER TABLE instances ADD COLUMN owner_token TEXT;`,
  // 11: each webhook's sealed signing secret, and the one a rotation replaced while it still signs.
  `ALTER TABLE webhooks ADD COLUMN secret_sealed TEXT;
   ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
   ALTER TABLE webhooks ADD COLUMN previous_secret_until TEXT;`,
  // 12: when each message's event left, so a message the network delivers again is not emitted twice.
  `ALTER TABLE messages ADD COLUMN emitted_at INTEGER;`,
  // 13: a received message whose event a node queued after it lost the instance: the extensions (chatbot,
  // helpdesk) are owed it by the next owner. The partial index keeps the next owner's look-up small.
  `ALTER TABLE messages ADD COLUMN owed TEXT;
   CREATE INDEX messages_owed ON messages (instance_id) WHERE owed IS NOT NULL;`,
  // 14: each node's last lease renewal, the store's witness that a holder lives (two Redis masters at once
  // can each call it gone).
  `CREATE TABLE node_heartbeats (node TEXT PRIMARY KEY, token TEXT NOT NULL, at INTEGER NOT NULL);`,
  // 15: an account's broker switches (JSON, AccountBrokers), the default of its instances without their own.
  `ALTER TABLE accounts ADD COLUMN brokers TEXT;`,
  // 16: a version of the runnable set (InstanceRepository.runnableVersion), so a node's reconcile pass reads
  // one row instead of every instance while nothing changes. Triggers, not the writers, bump it: no write
  // path can forget. The conditions are listRunnable's (a running connection state or a saved link, an
  // enabled account): a state change of a linked instance or a link saved while connecting bumps nothing.
  `CREATE TABLE runnable_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
   INSERT INTO runnable_version (id, version) VALUES (1, 0);
   CREATE TRIGGER runnable_instance_created AFTER INSERT ON instances
   WHEN json_extract(NEW.connection, '$.state') IN ('connecting', 'qr', 'connected')
   BEGIN UPDATE runnable_version SET version = version + 1; END;
   CREATE TRIGGER runnable_instance_deleted AFTER DELETE ON instances
   BEGIN UPDATE runnable_version SET version = version + 1; END;
   CREATE TRIGGER runnable_connection AFTER UPDATE OF connection ON instances
   WHEN (json_extract(OLD.connection, '$.state') IN ('connecting', 'qr', 'connected'))
     IS NOT (json_extract(NEW.connection, '$.state') IN ('connecting', 'qr', 'connected'))
     AND NOT EXISTS (SELECT 1 FROM owned_state o WHERE o.instance_id = NEW.id AND o.namespace = 'auth')
   BEGIN UPDATE runnable_version SET version = version + 1; END;
   CREATE TRIGGER runnable_link_saved AFTER INSERT ON owned_state
   WHEN NEW.namespace = 'auth' AND NOT EXISTS (SELECT 1 FROM owned_state o
     WHERE o.instance_id = NEW.instance_id AND o.namespace = 'auth' AND o.key <> NEW.key)
     AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = NEW.instance_id
       AND json_extract(i.connection, '$.state') IN ('connecting', 'qr', 'connected'))
   BEGIN UPDATE runnable_version SET version = version + 1; END;
   CREATE TRIGGER runnable_link_removed AFTER DELETE ON owned_state
   WHEN OLD.namespace = 'auth' AND NOT EXISTS (SELECT 1 FROM owned_state o
     WHERE o.instance_id = OLD.instance_id AND o.namespace = 'auth')
     AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = OLD.instance_id
       AND json_extract(i.connection, '$.state') IN ('connecting', 'qr', 'connected'))
   BEGIN UPDATE runnable_version SET version = version + 1; END;
   CREATE TRIGGER runnable_account AFTER UPDATE OF disabled_at ON accounts
   WHEN (OLD.disabled_at IS NULL) IS NOT (NEW.disabled_at IS NULL)
   BEGIN UPDATE runnable_version SET version = version + 1; END;`,
];

export function migrate(db: Database.Database): void {
  const run = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  });
  // Immediate: two processes opening a new file at once must not both run migration 1.
  run.immediate();
}
