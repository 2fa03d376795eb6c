/**
 * App-state (syncd) patches per account and collection, kept as the devices uploaded them: the
 * server cannot read them (they are encrypted with the account's app-state keys) and only orders
 * them, as WhatsApp does, so that another device or a resumed session catches up from its version.
 */
export class AppStateStore {
  readonly #collections = new Map<string, { version: number; patches: { version: number; bytes: Buffer }[] }>();

  version(account: string, name: string): number {
    return this.#collections.get(`${account}/${name}`)?.version ?? 0;
  }

  /** Stores a patch made over `fromVersion`; returns the collection's new version. */
  append(account: string, name: string, fromVersion: number, bytes: Buffer): number {
    const key = `${account}/${name}`;
    let c = this.#collections.get(key);
    if (!c) this.#collections.set(key, (c = { version: 0, patches: [] }));
    c.version = Math.max(c.version, fromVersion) + 1;
    c.patches.push({ version: c.version, bytes });
    return c.version;
  }

  /** Patches newer than `version`, oldest first. */
  since(account: string, name: string, version: number): { version: number; bytes: Buffer }[] {
    return this.#collections.get(`${account}/${name}`)?.patches.filter((p) => p.version > version) ?? [];
  }
}
