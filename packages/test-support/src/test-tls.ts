/**
 * A throwaway certificate authority and a server certificate it signed, for
 * tests of TLS listeners (the ACP adapter's bridge listener): the CA as the
 * team would hand it to members, the certificate and key as the operator
 * would configure them. ECDSA P-256, valid from a minute ago for a day.
 */
import "reflect-metadata";
import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

export interface TestTls {
  /** The CA certificate (what a member passes to the bridge with --ca). */
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);

const KEY: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const SIGN: webcrypto.EcdsaParams = { name: "ECDSA", hash: "SHA-256" };

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

/** A CA and a server certificate for `hosts` (DNS names and IP addresses). */
export async function createTestTls(hosts: readonly string[] = ["127.0.0.1", "localhost"]): Promise<TestTls> {
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);
  const caKeys = (await webcrypto.subtle.generateKey(KEY, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: "CN=Test Team CA",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = (await webcrypto.subtle.generateKey(KEY, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const names = hosts.map((h) => (/^[0-9.]+$|:/.test(h) ? { type: "ip" as const, value: h } : { type: "dns" as const, value: h }));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${hosts[0] ?? "localhost"}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
  return { caPem: ca.toString("pem"), certPem: cert.toString("pem"), keyPem };
}
