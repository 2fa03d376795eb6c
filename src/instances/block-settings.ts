import type { Logger } from 'pino';
import { NotFoundError, ValidationError } from '../errors.js';
import { storageTarget } from '../media/object-storage.js';
import type { ObjectStorageClients } from '../media/object-storage.js';
import type { SecretBox } from '../security/secret-box.js';
import type { InstanceConfig, InstanceRecord, ProxyConfig, StorageConfig, StorageStatus } from '../store/records.js';
import type { Store } from '../store/store.js';
import { isPlainObject } from '../validation.js';
import { parseBlockBody } from './creation-body.js';
import { checkProxyAddress, proxyBlock, storageBlock } from './instance-blocks.js';
import type { BlockResult } from './instance-blocks.js';
import { proxySummary, storageSummary } from './instance-summary.js';

export interface BlockSettingsOptions {
  store: Store;
  secrets: SecretBox;
  allowPrivateUrls: boolean;
  storage: ObjectStorageClients;
  logger: Logger;
}

function valueOrThrow<T>(result: BlockResult<T>): T {
  if (!result) throw new ValidationError('At least one field must be provided');
  if ('error' in result) throw new ValidationError(result.error);
  return result.value;
}

/**
 * The storage and proxy blocks after creation (POST /api/instance/s3 and /proxy): the same fields, rules
 * and messages as the creation body, but a wrong block is refused with 400 and changes nothing. Fields
 * left out keep their values; secrets are kept unless sent and are never returned.
 */
export class BlockSettings {
  constructor(private readonly options: BlockSettingsOptions) {}

  #ctx() {
    return { secrets: this.options.secrets, allowPrivateUrls: this.options.allowPrivateUrls };
  }

  /** Saves the storage block, then checks an enabled one by writing the check object; returns its summary. */
  async saveStorage(instance: InstanceRecord, raw: unknown) {
    if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
    const body = parseBlockBody(raw, 's3');
    const storage = valueOrThrow(storageBlock(body, this.#ctx(), { current: instance.config.storage }));
    await this.#save(instance, 'storage', storage);
    const storageStatus = storage.enabled ? await this.#check(instance, storage) : undefined;
    return storageSummary({ ...instance.config, storage, storageStatus });
  }

  storage(instance: InstanceRecord) {
    return storageSummary(instance.config);
  }

  /** Saves the proxy block; the session uses it from its next connection. */
  async saveProxy(instance: InstanceRecord, raw: Record<string, unknown>): Promise<ProxyConfig> {
    const proxy = valueOrThrow(
      await checkProxyAddress(
        proxyBlock(parseBlockBody(raw, 'proxy'), this.#ctx(), { current: instance.config.proxy }),
        this.#ctx(),
      ),
    );
    await this.#save(instance, 'proxy', proxy);
    return proxy;
  }

  proxy(instance: InstanceRecord) {
    return proxySummary(instance.config);
  }

  async #save<K extends 'storage' | 'proxy'>(
    instance: InstanceRecord,
    block: K,
    value: InstanceConfig[K],
  ): Promise<void> {
    if (!(await this.options.store.instances.updateConfigBlock(instance.id, block, value))) {
      throw new NotFoundError('Instance not found');
    }
    this.options.logger.info({ instance: instance.name, block }, 'configuration block saved');
  }

  /** The credentials check: the status it records says what to fix when it fails. */
  async #check(instance: InstanceRecord, storage: StorageConfig): Promise<StorageStatus> {
    const target = storageTarget(storage, this.options.secrets);
    let error: string | undefined;
    try {
      await this.options.storage.for(target).check();
    } catch (err) {
      error = (err as Error).message;
      this.options.logger.warn(
        { instance: instance.name, bucket: storage.bucket, reason: error },
        'storage check failed',
      );
    }
    const status: StorageStatus = {
      revision: storage.revision ?? '',
      state: error === undefined ? 'ok' : 'error',
      error,
      checkedAt: new Date().toISOString(),
    };
    await this.options.store.instances.updateConfigBlock(instance.id, 'storageStatus', status);
    return status;
  }
}
