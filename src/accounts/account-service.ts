import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { generateToken, hashToken } from '../security/tokens.js';
import type { CredentialNews } from '../events/credential-news.js';
import type { AccountRecord, InstanceRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { describeIssue } from '../validation.js';

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export const accountInputSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'use 1 to 64 letters, digits, dots, dashes or underscores'),
  instanceQuota: z.number().int().min(0).max(1_000_000).optional(),
  allowedOrigins: z
    .array(z.string().regex(ORIGIN, 'each origin is scheme://host[:port] with no path'))
    .max(100)
    .optional(),
});

export type AccountInput = z.infer<typeof accountInputSchema>;

/** An account as the admin API shows it: never its token hash. */
export function accountView(a: AccountRecord) {
  return {
    name: a.name,
    instanceQuota: a.instanceQuota,
    allowedOrigins: a.allowedOrigins,
    createdAt: a.createdAt,
    disabled: a.disabledAt !== undefined,
    disabledAt: a.disabledAt ?? null,
  };
}

const ACCOUNT_NOT_FOUND = 'Account not found';

/**
 * Customer accounts. TokenAccount is stored only as a hash: it is shown once, at creation or rotation.
 * Every change that revokes credentials is announced on `news` (when the process has a runtime), so that
 * every node closes the WebSockets it concerns at once.
 */
export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly defaultQuota: number,
    private readonly news?: CredentialNews,
  ) {}

  async create(raw: unknown): Promise<{ account: AccountRecord; token: string }> {
    const parsed = accountInputSchema.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    const token = generateToken();
    const account: AccountRecord = {
      id: randomUUID(),
      name: parsed.data.name,
      tokenHash: hashToken(token),
      instanceQuota: parsed.data.instanceQuota ?? this.defaultQuota,
      allowedOrigins: [...new Set((parsed.data.allowedOrigins ?? []).map((o) => o.toLowerCase()))],
      createdAt: new Date().toISOString(),
    };
    await this.store.accounts.create(account);
    return { account, token };
  }

  list(): Promise<AccountRecord[]> {
    return this.store.accounts.list();
  }

  /** Issues a new TokenAccount; the previous one stops working at once, on every node. */
  async rotateToken(name: string): Promise<string> {
    const account = await this.#require(name);
    const token = generateToken();
    if (!(await this.store.accounts.replaceTokenHash(name, hashToken(token)))) {
      throw new NotFoundError(ACCOUNT_NOT_FOUND);
    }
    await this.news?.publish({ accountId: account.id });
    return token;
  }

  /**
   * Disables (or enables) the account: while disabled its tokens and its instances' tokens answer 401
   * and its instances stop, keeping their sessions, so enabling brings them back without a new link.
   */
  async setDisabled(name: string, disabled: boolean): Promise<AccountRecord> {
    const current = await this.#require(name);
    if (disabled === (current.disabledAt !== undefined)) return current;
    const account = await this.store.accounts.setDisabled(name, disabled ? new Date().toISOString() : undefined);
    if (!account) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    await this.news?.publish({ accountId: account.id });
    return account;
  }

  /**
   * Deletes the account. With instances left it is refused (ConflictError), unless `force`: then each
   * instance is deleted first as the instance delete does (`unlink` logs its device out, best effort).
   */
  async delete(
    name: string,
    options: { force: boolean; unlink?: (instance: InstanceRecord) => Promise<void> },
  ): Promise<{ account: AccountRecord; deletedInstances: string[] }> {
    const account = await this.#require(name);
    const instances = await this.store.instances.listByAccount(account.id);
    if (instances.length > 0 && !options.force) {
      throw new ConflictError(`Account has ${instances.length} instance(s); delete them first or use force=true`);
    }
    const deletedInstances: string[] = [];
    for (const instance of instances) {
      await options.unlink?.(instance);
      if (await this.store.instances.delete(instance.id)) deletedInstances.push(instance.name);
      await this.news?.publish({ instanceId: instance.id });
    }
    if (!(await this.store.accounts.delete(account.id))) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    await this.news?.publish({ accountId: account.id });
    return { account, deletedInstances };
  }

  async #require(name: string): Promise<AccountRecord> {
    const account = await this.store.accounts.findByName(name);
    if (!account) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    return account;
  }

  /**
   * First embedded start: with no account at all, create `default` so that `npm start` is usable at
   * once. Returns its token, or undefined when accounts already exist.
   */
  async ensureFirstAccount(): Promise<string | undefined> {
    if ((await this.store.accounts.count()) > 0) return undefined;
    try {
      return (await this.create({ name: 'default' })).token;
    } catch (err) {
      // Another process sharing the file created it first: that one printed the token.
      if (err instanceof ConflictError) return undefined;
      throw err;
    }
  }
}
