/**
 * What setup checks against the gateway before it prints or changes
 * anything: the team CA it downloads is a CA certificate, the member key is
 * accepted by the proxy (a CONNECT to a Cursor host with the key), and the
 * proxy's certificate for that host is signed by exactly that CA (a TLS
 * handshake through the tunnel that trusts only it). So a wrong key, a CA
 * from another gateway or a wrong address is caught on the member's machine.
 */
import http from "node:http";
import { X509Certificate } from "node:crypto";
import tls from "node:tls";

/** The Cursor host setup checks the proxy with (intercepted by the proxy itself; nothing reaches Cursor). */
export const CHECK_HOST = "api2.cursor.sh";

export type CaDownload = { kind: "ok"; pem: string; fingerprint: string } | { kind: "failed"; message: string };

export async function downloadCa(url: string, timeoutMs = 10_000): Promise<CaDownload> {
  let text: string;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return { kind: "failed", message: `${url} answered HTTP ${response.status}` };
    text = await response.text();
  } catch (err) {
    return { kind: "failed", message: `cannot download ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}` };
  }
  try {
    const cert = new X509Certificate(text);
    if (!cert.ca) return { kind: "failed", message: `${url} is not a CA certificate` };
    return { kind: "ok", pem: text, fingerprint: cert.fingerprint256 };
  } catch {
    return { kind: "failed", message: `${url} did not return a PEM certificate` };
  }
}

export type ProxyCheck =
  | { kind: "ok" }
  | { kind: "key_refused"; status: number }
  | { kind: "ca_mismatch"; message: string }
  | { kind: "unreachable"; message: string }
  | { kind: "unexpected"; message: string };

/** CONNECT to CHECK_HOST through `proxyUrl` with the member's key, then TLS trusting only `caPem`. */
export function checkThroughProxy(proxyUrl: string, credentials: { name: string; key: string }, caPem: string, timeoutMs = 10_000): Promise<ProxyCheck> {
  const proxy = new URL(proxyUrl);
  const authorization = `Basic ${Buffer.from(`${credentials.name}:${credentials.key}`).toString("base64")}`;
  return new Promise((resolve) => {
    const req = http.request({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: "CONNECT",
      path: `${CHECK_HOST}:443`,
      headers: { host: `${CHECK_HOST}:443`, "proxy-authorization": authorization },
      timeout: timeoutMs,
    });
    req.once("timeout", () => {
      req.destroy();
      resolve({ kind: "unreachable", message: `no answer from ${proxy.origin} within ${timeoutMs / 1000} s` });
    });
    req.once("error", (err) => resolve({ kind: "unreachable", message: `${proxy.origin}: ${err.message}` }));
    req.once("response", (res) => {
      res.resume();
      resolve(res.statusCode === 407 ? { kind: "key_refused", status: 407 } : { kind: "unexpected", message: `${proxy.origin} answered CONNECT with HTTP ${res.statusCode}` });
    });
    req.once("connect", (res, socket) => {
      if (res.statusCode === 407) {
        socket.destroy();
        resolve({ kind: "key_refused", status: 407 });
        return;
      }
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ kind: "unexpected", message: `${proxy.origin} answered CONNECT with HTTP ${res.statusCode}` });
        return;
      }
      const secure = tls.connect({ socket, servername: CHECK_HOST, ca: [caPem], ALPNProtocols: ["http/1.1"] });
      secure.setTimeout(timeoutMs, () => {
        secure.destroy();
        resolve({ kind: "unreachable", message: `TLS through ${proxy.origin} did not complete within ${timeoutMs / 1000} s` });
      });
      secure.once("secureConnect", () => {
        secure.destroy();
        resolve({ kind: "ok" });
      });
      secure.once("error", (err) => {
        secure.destroy();
        resolve({ kind: "ca_mismatch", message: `the proxy's certificate for ${CHECK_HOST} is not signed by this CA (${err.message})` });
      });
    });
    req.end();
  });
}
