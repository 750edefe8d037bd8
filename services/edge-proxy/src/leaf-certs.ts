/**
 * Leaf certificates for intercepted hosts, signed by the team CA and cached per
 * host as ready-to-use TLS secure contexts. One ECDSA P-256 key pair per process
 * serves every leaf; each leaf lives 30 days and is re-issued a day before it
 * expires. Only hosts inside the CA's permitted domains are ever signed.
 */
import { createSecureContext, type SecureContext } from "node:tls";
import { webcrypto } from "node:crypto";
import * as x509 from "./x509.ts";
import { KEY_ALGORITHM, SIGNING_ALGORITHM, isWithinDomains, normalizeHost, randomSerial, type TeamCa } from "./ca.ts";

const LEAF_LIFETIME_MS = 30 * 24 * 3600_000;
const RENEW_BEFORE_MS = 24 * 3600_000;
const BACKDATE_MS = 60 * 60_000;
const MAX_CACHED_HOSTS = 1000;

interface CachedLeaf {
  context: SecureContext;
  certPem: string;
  renewAt: number;
}

export interface IssuedLeaf {
  readonly context: SecureContext;
  readonly certPem: string;
}

export class LeafCertificates {
  readonly #ca: TeamCa;
  readonly #domains: readonly string[];
  #keys: Promise<{ pair: webcrypto.CryptoKeyPair; keyPem: string }> | undefined;
  readonly #cache = new Map<string, CachedLeaf>();
  readonly #pending = new Map<string, Promise<CachedLeaf>>();

  constructor(ca: TeamCa, interceptDomains: readonly string[]) {
    this.#ca = ca;
    this.#domains = interceptDomains;
  }

  /** The TLS context presenting a CA-signed certificate for `host`. */
  async forHost(rawHost: string, now = Date.now()): Promise<IssuedLeaf> {
    const host = normalizeHost(rawHost);
    if (!isWithinDomains(host, this.#domains) || !isWithinDomains(host, this.#ca.permittedDomains)) {
      throw new Error(`refusing to issue a certificate for ${host}: not an intercepted domain`);
    }
    const cached = this.#cache.get(host);
    if (cached && cached.renewAt > now) {
      // Refresh LRU position.
      this.#cache.delete(host);
      this.#cache.set(host, cached);
      return cached;
    }
    let pending = this.#pending.get(host);
    if (!pending) {
      pending = this.#issue(host, now).finally(() => this.#pending.delete(host));
      this.#pending.set(host, pending);
    }
    const leaf = await pending;
    this.#cache.delete(host);
    this.#cache.set(host, leaf);
    while (this.#cache.size > MAX_CACHED_HOSTS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
    }
    return leaf;
  }

  #leafKeys(): Promise<{ pair: webcrypto.CryptoKeyPair; keyPem: string }> {
    this.#keys ??= (async () => {
      const pair = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
      const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", pair.privateKey), "PRIVATE KEY");
      return { pair, keyPem };
    })();
    return this.#keys;
  }

  async #issue(host: string, now: number): Promise<CachedLeaf> {
    const { pair, keyPem } = await this.#leafKeys();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: `CN=${host}`,
      issuer: this.#ca.cert.subject,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + LEAF_LIFETIME_MS),
      publicKey: pair.publicKey,
      signingKey: this.#ca.privateKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: "dns", value: host }]),
        await x509.SubjectKeyIdentifierExtension.create(pair.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(this.#ca.cert),
      ],
    });
    const certPem = cert.toString("pem");
    return {
      context: createSecureContext({ key: keyPem, cert: certPem, minVersion: "TLSv1.2" }),
      certPem,
      renewAt: now + LEAF_LIFETIME_MS - RENEW_BEFORE_MS,
    };
  }
}
