/**
 * libsignal (inside Baileys) prints every session it opens or closes, whole, with console.info/warn.
 * The simulator's phones and the nodes of a test run share one process, so these lines would bury the
 * test report; they are dropped here, in tests only.
 */
const NOISE = [
  'Closing session:',
  'Opening session:',
  'Closing open session in favor of incoming prekey bundle',
  'Removing old closed session:',
  'Session already',
  'Decrypted message with closed session.',
  'Migrating session to:',
  // A phone that cannot decrypt records the failure itself (its /failures): libsignal's dump adds nothing.
  'Failed to decrypt message with any known session',
  'Session error:',
];

let installed = false;

export function quietSignalConsole(): void {
  if (installed) return;
  installed = true;
  for (const level of ['info', 'warn', 'error'] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && NOISE.some((n) => (args[0] as string).startsWith(n))) return;
      original(...args);
    };
  }
}
