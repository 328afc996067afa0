import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback port nothing listens on right now: a server started next can take it, and a client
 * connecting to it is refused (a closed port).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
