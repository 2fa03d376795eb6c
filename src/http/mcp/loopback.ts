import type { Socket } from 'node:net';
import { Agent, fetch } from 'undici';

/** A REST call an MCP tool makes, and its answer. */
export interface LoopbackRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface LoopbackAnswer {
  status: number;
  /** The parsed JSON answer, or the text when it is not JSON. */
  body: unknown;
}

/** TLS to our own socket address: the certificate names a host, not the address, and the peer is this node. */
const selfTls = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 4_000 });
const plain = new Agent({ keepAliveTimeout: 4_000 });

/**
 * Sends a REST call to this very node, on the address and port the MCP request came in on: the call goes
 * through the whole edge as any client's would (token, rate limit, route guards and validation), and the
 * route reaches the instance through the cluster router, so a tool works on any node.
 */
export async function loopback(socket: Socket, request: LoopbackRequest): Promise<LoopbackAnswer> {
  const secure = (socket as Socket & { encrypted?: boolean }).encrypted === true;
  const address = socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `${secure ? 'https' : 'http'}://${host}:${socket.localPort}${request.path}`;
  const res = await fetch(url, {
    method: request.method,
    headers: {
      ...request.headers,
      ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
    dispatcher: secure ? selfTls : plain,
    redirect: 'manual',
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body };
}
