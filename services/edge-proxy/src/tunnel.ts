/**
 * Blind CONNECT tunnel for every host that is not intercepted: bytes are copied
 * both ways untouched, so the client talks TLS with the origin itself and sees
 * the origin's own certificate.
 */
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "@byok/platform";

export interface TunnelOptions {
  connectTimeoutMs: number;
  log: Logger;
  /** Open sockets, so the proxy can close them on stop. */
  track: Set<Duplex>;
}

export function openTunnel(client: Duplex, head: Buffer, host: string, port: number, options: TunnelOptions): void {
  const origin: Socket = connect({ host, port });
  options.track.add(origin);
  origin.on("close", () => options.track.delete(origin));
  let established = false;
  const timer = setTimeout(() => origin.destroy(new Error(`connect timeout after ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);

  origin.once("connect", () => {
    clearTimeout(timer);
    established = true;
    origin.setNoDelay(true);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) origin.write(head);
    origin.pipe(client);
    client.pipe(origin);
  });
  origin.on("error", (err) => {
    clearTimeout(timer);
    options.log.debug({ err: err.message, host, port }, "tunnel origin failed");
    if (!established && !client.destroyed) {
      client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\ncannot reach ${host}:${port}: ${err.message}\n`);
    } else {
      client.destroy();
    }
  });
  // A clean end is passed on by pipe(); only an abrupt close cuts the client off.
  origin.on("close", (hadError) => {
    if (established && hadError) client.destroy();
  });
  client.on("error", () => origin.destroy());
  client.on("close", () => origin.destroy());
}
