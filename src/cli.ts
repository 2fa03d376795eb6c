import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { AccountService, accountView } from './accounts/account-service.js';
import { AppError } from './errors.js';
import { ConfigError, loadConfig } from './config/config.js';
import { openStore } from './store/open-store.js';

const USAGE = `usage:
  npm run cli -- account create NAME [--quota N] [--origin https://app.example.com ...]
  npm run cli -- account list
  npm run cli -- account token NAME      (issues a new token; the old one is revoked)`;

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { quota: { type: 'string' }, origin: { type: 'string', multiple: true } },
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
