/**
 * Ports `npm start` listens on, checked before anything starts (embedded NATS
 * and Postgres), and the one-line message for a port in use, naming the
 * variable that moves it.
 */
import net from "node:net";

export interface ListenTarget {
  /** What listens there, e.g. "the edge proxy". */
  what: string;
  host: string;
  port: number;
  /** The environment variable that sets the port. */
  variable: string;
  /** Another way out, e.g. "or set NATS_URL to a NATS server you run". */
  alternative?: string;
}

/** True when nothing else listens on host:port (we can bind it, and release it at once). */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export function portInUseMessage(target: ListenTarget): string {
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return (
    `port ${target.port} (${target.what}) on ${host} is already in use: ` +
    `set ${target.variable} to a free port${target.alternative ? `, ${target.alternative}` : ""} (or stop what listens there).`
  );
}
