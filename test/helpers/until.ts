/**
 * The one way tests wait for something that happens on its own (an event over the network, a process, a
 * delivery): polls `probe` until it gives a value other than `undefined` or `false` and resolves with it
 * (a condition's `true`), or fails with `timed out waiting for <what>` after `timeoutMs`. `intervalMs` is
 * the pause between two looks (shorter where a test measures how soon something happened).
 */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 5000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
