/**
 * A Map that keeps at most `max` entries: setting a new key past the bound drops the oldest one. For the
 * "recently seen" memories (own sends, calls in progress, kept media) that must not grow with traffic.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value!);
    return this;
  }
}

/** The set form of BoundedMap: the last `max` values added. */
export class BoundedSet<T> extends Set<T> {
  constructor(readonly max: number) {
    super();
  }

  override add(value: T): this {
    super.add(value);
    if (this.size > this.max) this.delete(this.values().next().value!);
    return this;
  }
}
