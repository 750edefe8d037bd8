/**
 * Binding a service's listener: `listen` starts `server` on host:port and
 * resolves once it listens (a bind error such as EADDRINUSE rejects), and
 * `urlHost` writes a host as it stands in a URL (an IPv6 address in brackets),
 * `closeOnce` is the stop() of a plain HTTP listener.
 */
import type { Server as HttpServer } from "node:http";
import type { Server } from "node:net";

/** Listens on host:port (0 = any free port) and resolves with the port it got. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : port;
}

/** The host as a URL writes it: "::1" -> "[::1]", others as they are. */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** stop() of a plain HTTP listener: closes it and every open connection (once; later calls share the first). */
export function closeOnce(server: HttpServer): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopped;
  };
}
