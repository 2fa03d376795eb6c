import { WebSocket } from 'ws';

/** A server-side socket's ping state (spec section 6: the server pings, a silent client is dropped). */
export interface Heartbeating {
  readonly ws: WebSocket;
  nextPingAt: number;
  /** Set while a ping is unanswered: the socket is dropped at this time unless a pong arrives first. */
  pongDeadline: number | undefined;
}

export interface HeartbeatTiming {
  pingIntervalMs: number;
  pongTimeoutMs: number;
}

/** A new socket's state: first ping one interval from now; a pong clears the deadline. */
export function startHeartbeat<T extends object>(ws: WebSocket, timing: HeartbeatTiming, extra: T): Heartbeating & T {
  const state: Heartbeating & T = {
    ...extra,
    ws,
    nextPingAt: Date.now() + timing.pingIntervalMs,
    pongDeadline: undefined,
  };
  ws.on('pong', () => {
    state.pongDeadline = undefined;
  });
  return state;
}

/** How often to tick: often enough to drop a silent client close to its deadline without a timer per socket. */
export function heartbeatTickMs(timing: HeartbeatTiming): number {
  return Math.max(5, Math.min(1000, timing.pingIntervalMs, timing.pongTimeoutMs));
}

/** One tick over `sockets`: pings those that are due, hands to `drop` those whose pong deadline passed. */
export function beat<S extends Heartbeating>(
  sockets: Iterable<S>,
  timing: HeartbeatTiming,
  drop: (socket: S) => void,
): void {
  const now = Date.now();
  for (const socket of [...sockets]) {
    if (socket.ws.readyState !== WebSocket.OPEN) continue;
    if (socket.pongDeadline !== undefined && now >= socket.pongDeadline) {
      drop(socket);
      continue;
    }
    if (now >= socket.nextPingAt) {
      socket.nextPingAt = now + timing.pingIntervalMs;
      socket.pongDeadline ??= now + timing.pongTimeoutMs;
      socket.ws.ping();
    }
  }
}
