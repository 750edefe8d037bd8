import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, connect, type SecureContext } from "node:tls";
import type { AddressInfo } from "node:net";
import { webcrypto } from "node:crypto";
import * as x509 from "./x509.ts";
import { silentLogger } from "@byok/platform";
import { CaError, KEY_ALGORITHM, SIGNING_ALGORITHM, loadOrCreateCa, permittedDomainsOf, randomSerial, type TeamCa } from "./ca.ts";
import { LeafCertificates } from "./leaf-certs.ts";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "edge-ca-"));
  dirs.push(d);
  return join(d, "ca");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** TLS handshake against a server presenting `context`; resolves with the client's verdict. */
async function handshake(context: SecureContext, caPem: string, servername: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const server = createServer({ SNICallback: (_name, cb) => cb(null, context) });
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await new Promise((resolve) => {
      const socket = connect({ port: (server.address() as AddressInfo).port, host: "127.0.0.1", servername, ca: caPem });
      socket.once("secureConnect", () => {
        socket.destroy();
        resolve({ ok: true });
      });
      socket.once("error", (err) => resolve({ ok: false, error: err.message }));
    });
  } finally {
    server.close();
  }
}

/** Signs a leaf for `host` with the CA key directly, bypassing LeafCertificates' own refusal. */
async function forgeLeaf(ca: TeamCa, host: string): Promise<SecureContext> {
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${host}`,
    issuer: ca.cert.subject,
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "dns", value: host }]), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
  const { createSecureContext } = await import("node:tls");
  return createSecureContext({ key: keyPem, cert: cert.toString("pem") });
}

describe("team CA", () => {
  it("is created once with a private key readable only by its owner, and reloaded unchanged", async () => {
    const dir = tempDir();
    const first = await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    expect(first.created).toBe(true);
    expect(statSync(join(dir, "ca.key")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, "ca.crt"), "utf8")).toBe(first.ca.certPem);

    const second = await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    expect(second.created).toBe(false);
    expect(second.ca.certPem).toBe(first.ca.certPem);
    expect(second.ca.cert.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);
    expect(permittedDomainsOf(second.ca.cert)).toEqual(["cursor.sh"]);
  });

  it("is created by exactly one of several proxies starting at once on one directory; all load the same CA", async () => {
    const dir = tempDir();
    const results = await Promise.all([0, 1, 2].map(() => loadOrCreateCa(dir, ["cursor.sh"], silentLogger())));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.ca.certPem)).size).toBe(1);
    expect(readFileSync(join(dir, "ca.crt"), "utf8")).toBe(results[0]!.ca.certPem);
  });

  it("tightens a key file that others can read", async () => {
    const dir = tempDir();
    await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    chmodSync(join(dir, "ca.key"), 0o644);
    await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    expect(statSync(join(dir, "ca.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses to start when the configured domains are outside the CA's constraints", async () => {
    const dir = tempDir();
    await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    await expect(loadOrCreateCa(dir, ["cursor.sh", "example.com"], silentLogger())).rejects.toThrow(CaError);
    // A subdomain of a permitted domain is fine.
    await expect(loadOrCreateCa(dir, ["api2.cursor.sh"], silentLogger())).resolves.toMatchObject({ created: false });
  });

  it("refuses a key that does not belong to the certificate", async () => {
    const dir = tempDir();
    const other = tempDir();
    await loadOrCreateCa(dir, ["cursor.sh"], silentLogger());
    await loadOrCreateCa(other, ["cursor.sh"], silentLogger());
    writeFileSync(join(dir, "ca.key"), readFileSync(join(other, "ca.key")));
    await expect(loadOrCreateCa(dir, ["cursor.sh"], silentLogger())).rejects.toThrow(/does not belong/);
  });
});

describe("leaf certificates", () => {
  it("issue a certificate a TLS client trusting only the team CA accepts for the host", async () => {
    const { ca } = await loadOrCreateCa(tempDir(), ["cursor.sh"], silentLogger());
    const leafs = new LeafCertificates(ca, ["cursor.sh"]);
    const leaf = await leafs.forHost("API2.cursor.sh.");
    expect(await handshake(leaf.context, ca.certPem, "api2.cursor.sh")).toEqual({ ok: true });
    // Cached per host: the same certificate comes back.
    expect((await leafs.forHost("api2.cursor.sh")).certPem).toBe(leaf.certPem);
    // A different host gets its own certificate, which does not cover the first host.
    const other = await leafs.forHost("api3.cursor.sh");
    expect(other.certPem).not.toBe(leaf.certPem);
    const mismatch = await handshake(other.context, ca.certPem, "api2.cursor.sh");
    expect(mismatch.ok).toBe(false);
  });

  it("are never issued for hosts outside the intercepted domains", async () => {
    const { ca } = await loadOrCreateCa(tempDir(), ["cursor.sh"], silentLogger());
    await expect(new LeafCertificates(ca, ["cursor.sh"]).forHost("example.com")).rejects.toThrow(/not an intercepted domain/);
    await expect(new LeafCertificates(ca, ["cursor.sh"]).forHost("evilcursor.sh")).rejects.toThrow(/not an intercepted domain/);
  });

  it("signed by the CA for another domain are rejected by TLS clients (name constraints)", async () => {
    const { ca } = await loadOrCreateCa(tempDir(), ["cursor.sh"], silentLogger());
    const forged = await forgeLeaf(ca, "example.com");
    const verdict = await handshake(forged, ca.certPem, "example.com");
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.error).toMatch(/subtree|name constraint/i);
  });
});
