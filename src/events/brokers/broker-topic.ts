/**
 * One name as a single word of a routing key or subject: every character but letters, digits, `-` and `_`
 * percent-encoded (UTF-8), so that a `.` (or a wildcard `*`, `#`, `>`) in a name cannot add a word.
 */
export function escapeWord(name: string): string {
  return encodeURIComponent(name).replace(
    /[.!~*'()]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/** `<account>.<instance>.<event>`: the RabbitMQ routing key, and the NATS subject after `switchboard.`. */
export function brokerTopic(account: string, instance: string, event: string): string {
  return `${escapeWord(account)}.${escapeWord(instance)}.${event}`;
}
