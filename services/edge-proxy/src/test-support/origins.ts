/**
 * Local origins for edge-proxy tests: an HTTPS stand-in for Cursor's upstream
 * (own self-signed CA, certificate for 127.0.0.1/localhost) and plain HTTP
 * servers. Each records every request with its full body.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { webcrypto } from "node:crypto";
import * as x509 from "../x509.ts";
import { KEY_ALGORITHM, SIGNING_ALGORITHM, randomSerial } from "../ca.ts";

export interface TestPki {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A throwaway CA and a server certificate for 127.0.0.1 and localhost. */
export async function makeOriginPki(): Promise<TestPki> {
  const caKeys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: "CN=Upstream Stand-in CA",
    keys: caKeys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: "CN=localhost",
    issuer: ca.subject,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: "ip", value: "127.0.0.1" },
        { type: "dns", value: "localhost" },
      ]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
  return { caPem: ca.toString("pem"), certPem: cert.toString("pem"), keyPem };
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

export type OriginHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => unknown;

export interface TestOrigin {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Replace the request handler. */
  handle(handler: OriginHandler): void;
  close(): Promise<void>;
}

function serve(server: http.Server, scheme: "http" | "https", initial: OriginHandler): Promise<TestOrigin> {
  const requests: RecordedRequest[] = [];
  let handler = initial;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body });
      Promise.resolve(handler(req, res, body)).catch(() => res.destroy());
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `${scheme}://127.0.0.1:${port}`,
        port,
        requests,
        handle(next) {
          handler = next;
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

export function startHttpsOrigin(pki: TestPki, handler: OriginHandler): Promise<TestOrigin> {
  return serve(https.createServer({ key: pki.keyPem, cert: pki.certPem }), "https", handler);
}

export function startHttpOrigin(handler: OriginHandler): Promise<TestOrigin> {
  return serve(http.createServer(), "http", handler);
}
