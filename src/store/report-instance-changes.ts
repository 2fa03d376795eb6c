import type { InstanceRepository, Store } from './store.js';

/** The instance repository's writes that change what a record says; claims (the owner epoch) are not among them. */
const CHANGES = new Set<string>(['delete', 'updateSettings', 'updateConfigBlock', 'replaceToken', 'setConnection']);

type Method = (...args: unknown[]) => unknown;

/**
 * The store, with every write that changes an instance's record reported to `changed` (its first argument
 * is the instance id) once it has settled, failed or not: a failed write may still have taken effect.
 */
export function reportInstanceChanges(store: Store, changed: (instanceId: string) => void): Store {
  const instances = new Proxy<InstanceRepository>(store.instances, {
    get: madeOnce((target, key) => {
      const value = bound(target, key);
      if (!CHANGES.has(key)) return value;
      return (id: string, ...rest: unknown[]) =>
        ((value as Method)(id, ...rest) as Promise<unknown>).finally(() => changed(id));
    }),
  });
  return new Proxy<Store>(store, {
    get: madeOnce((target, key) => (key === 'instances' ? instances : bound(target, key))),
  });
}

/** The property, a method bound to its object (so that a store's private fields stay reachable). */
function bound(target: object, key: string): unknown {
  const value: unknown = Reflect.get(target, key, target);
  return typeof value === 'function' ? (value as Method).bind(target) : value;
}

/** A Proxy `get` that makes each property's answer once (stores and repositories do not change their members). */
function madeOnce(make: (target: object, key: string) => unknown) {
  const made = new Map<string, unknown>();
  return (target: object, key: PropertyKey): unknown => {
    if (typeof key !== 'string') return Reflect.get(target, key, target);
    if (!made.has(key)) made.set(key, make(target, key));
    return made.get(key);
  };
}
