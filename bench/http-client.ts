import type { Agent } from 'node:http';
import { request } from 'node:http';

/**
 * One API call over node:http with the bench's keep-alive Agent (not global fetch: lighter on the CPU,
 * which matters when the client, the nodes and Redis share two cores). Resolves with any status.
 */
export function apiCall(
  agent: Agent,
  url: URL,
  method: string,
  token: string,
  payload?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          token,
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
