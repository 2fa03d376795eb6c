import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `port` (0: any free one) and resolves with the port taken; a failure to bind rejects. */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Stops accepting, then cuts the connections still open (keep-alive clients would hold close() forever). */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
