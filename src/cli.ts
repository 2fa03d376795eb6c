import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { AccountService, accountView } from './accounts/account-service.js';
import { AppError } from './errors.js';
import { ConfigError, loadConfig } from './config/config.js';
import { openStore } from './store/open-store.js';

const USAGE = `usage:
  npm run cli -- account create NAME [--quota N] [--origin https://app.example.com ...]
  npm run cli -- account list
  npm run cli -- account token NAME      (issues a new token; the old one is revoked)
  npm run cli -- account disable NAME    (its tokens answer 401, its instances stop and keep their sessions)
  npm run cli -- account enable NAME
  npm run cli -- account delete NAME [--force]
                                         (--force deletes its instances too; their devices stay linked on
                                          the phones: delete through the admin API to log them out first)

Nodes see each change at once over HTTP and within WS_CONFIG_REFRESH_MS on open WebSockets.`;

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      quota: { type: 'string' },
      origin: { type: 'string', multiple: true },
      force: { type: 'boolean' },
    },
  });
  const [noun, verb, name] = positionals;
  if (noun !== 'account' || !verb) {
    process.stderr.write(`${USAGE}\n`);
    return 64;
  }
  const config = loadConfig();
  const store = await openStore(config, pino({ level: 'warn' }, pino.destination(2)));
  const accounts = new AccountService(store, config.defaultInstanceQuota);
  try {
    if (verb === 'create' && name) {
      const quota = values.quota === undefined ? undefined : Number(values.quota);
      const { account, token } = await accounts.create({
        name,
        ...(quota === undefined ? {} : { instanceQuota: quota }),
        ...(values.origin ? { allowedOrigins: values.origin } : {}),
      });
      process.stdout.write(`${JSON.stringify({ ...accountView(account), token })}\n`);
    } else if (verb === 'list') {
      for (const a of await accounts.list()) process.stdout.write(`${JSON.stringify(accountView(a))}\n`);
    } else if (verb === 'token' && name) {
      process.stdout.write(`${JSON.stringify({ name, token: await accounts.rotateToken(name) })}\n`);
    } else if ((verb === 'disable' || verb === 'enable') && name) {
      process.stdout.write(`${JSON.stringify(accountView(await accounts.setDisabled(name, verb === 'disable')))}\n`);
    } else if (verb === 'delete' && name) {
      const { deletedInstances } = await accounts.delete(name, { force: values.force === true });
      process.stdout.write(`${JSON.stringify({ name, deleted: true, deletedInstances })}\n`);
    } else {
      process.stderr.write(`${USAGE}\n`);
      return 64;
    }
    return 0;
  } finally {
    await store.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known =
      err instanceof AppError ||
      err instanceof ConfigError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`switchboard: ${known ? (err as Error).message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  },
);
