/**
 * The ids of the messages a subscriber has taken, each remembered for a while. A PUBLISH can reach a
 * subscriber twice: ioredis sends a command again after a reconnection when the broken connection lost
 * its reply, though Redis had delivered it. What a message makes happen (a routed call, an event on a
 * WebSocket) must happen once, so its id is checked here first.
 */
export class DeliveryMemory {
  /** Id → when it may be forgotten, oldest first. */
  readonly #taken = new Map<string, number>();

  constructor(
    /** Well past a reconnection to Redis, after which ioredis sends its unanswered commands again. */
    private readonly memoryMs = 120_000,
    /** Bounds the memory at high rates (the window then shortens to this many messages). */
    private readonly maxIds = 200_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True the first time `id` is seen; false for a repeat. */
  first(id: string): boolean {
    const now = this.now();
    for (const [taken, expiry] of this.#taken) {
      if (expiry > now && this.#taken.size <= this.maxIds) break;
      this.#taken.delete(taken);
    }
    if (this.#taken.has(id)) return false;
    this.#taken.set(id, now + this.memoryMs);
    return true;
  }
}
