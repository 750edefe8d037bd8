/**
 * The team CA: created on first start in CA_DIR (ca.crt 0644, ca.key 0600, dir
 * 0700), reloaded afterwards. Several proxies may share CA_DIR and start at
 * once: the first to link its key into place creates the CA, the others wait
 * for its certificate and load it. It is constrained (nameConstraints, critical) to
 * the intercepted domains, so even a stolen key cannot mint a certificate that
 * clients accept for any other host.
 *
 * Library: @peculiar/x509. It builds certificates on the platform WebCrypto
 * (Node's OpenSSL: ECDSA P-256 keys in microseconds, native signatures), is
 * typed, maintained, and its ASN.1 layer (@peculiar/asn1-x509) encodes the
 * nameConstraints extension the certificate API does not wrap. node-forge, the
 * alternative, is pure JS, has no ECDSA certificates (RSA keys take seconds to
 * generate) and has had signature-verification CVEs.
 */
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "./x509.ts";
import { AsnConvert } from "@peculiar/asn1-schema";
import { GeneralName, GeneralSubtree, GeneralSubtrees, NameConstraints, id_ce_nameConstraints } from "@peculiar/asn1-x509";
import type { Logger } from "@byok/platform";

/** The WebCrypto type @peculiar/x509 expects (DOM typings are not in our lib). */
type x509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
const platformCrypto = webcrypto as unknown as x509Crypto;
x509.cryptoProvider.set(platformCrypto);

export const KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
export const SIGNING_ALGORITHM: webcrypto.EcdsaParams = { name: "ECDSA", hash: "SHA-256" };

export const CA_CERT_FILE = "ca.crt";
export const CA_KEY_FILE = "ca.key";

export interface TeamCa {
  readonly certPem: string;
  readonly cert: x509.X509Certificate;
  readonly privateKey: webcrypto.CryptoKey;
  /** DNS subtrees the CA may sign for (from its nameConstraints). */
  readonly permittedDomains: readonly string[];
}

export class CaError extends Error {
  override readonly name = "CaError";
}

/** Lower-case, no trailing dot. */
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, "");
}

/** True when `host` is one of `domains` or a subdomain of one. */
export function isWithinDomains(host: string, domains: readonly string[]): boolean {
  const h = normalizeHost(host);
  return domains.some((d) => h === d || h.endsWith(`.${d}`));
}

export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive INTEGER
  return bytes.toString("hex");
}

function nameConstraintsExtension(domains: readonly string[]): x509.Extension {
  const value = new NameConstraints({
    permittedSubtrees: new GeneralSubtrees(domains.map((d) => new GeneralSubtree({ base: new GeneralName({ dNSName: d }) }))),
    // No IP-address certificates at all (IPv4 and IPv6, any address).
    excludedSubtrees: new GeneralSubtrees([
      new GeneralSubtree({ base: new GeneralName({ iPAddress: "0.0.0.0/0" }) }),
      new GeneralSubtree({ base: new GeneralName({ iPAddress: "::/0" }) }),
    ]),
  });
  return new x509.Extension(id_ce_nameConstraints, true, AsnConvert.serialize(value));
}

/** The permitted DNS subtrees of a CA certificate, or undefined when it has no nameConstraints. */
export function permittedDomainsOf(cert: x509.X509Certificate): string[] | undefined {
  const ext = cert.getExtension(id_ce_nameConstraints);
  if (!ext) return undefined;
  const parsed = AsnConvert.parse(ext.value, NameConstraints);
  return (parsed.permittedSubtrees ?? []).flatMap((s) => (s.base.dNSName === undefined ? [] : [normalizeHost(s.base.dNSName)]));
}

export async function createCa(domains: readonly string[], now = new Date()): Promise<{ ca: TeamCa; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: "CN=BYOK Gateway Team CA, O=BYOK Gateway",
    notBefore: new Date(now.getTime() - 5 * 60_000),
    notAfter: new Date(now.getTime() + 10 * 365 * 24 * 3600_000),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      nameConstraintsExtension(domains),
    ],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
  return { ca: { certPem: cert.toString("pem"), cert, privateKey: keys.privateKey, permittedDomains: [...domains] }, keyPem };
}

function writeAtomically(path: string, data: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode, flag: "wx" });
  chmodSync(tmp, mode); // writeFileSync's mode is filtered by the umask
  renameSync(tmp, path);
}

async function keyMatchesCert(privateKey: webcrypto.CryptoKey, cert: x509.X509Certificate): Promise<boolean> {
  const probe = randomBytes(32);
  const signature = await webcrypto.subtle.sign(SIGNING_ALGORITHM, privateKey, probe);
  const publicKey = await cert.publicKey.export(KEY_ALGORITHM, ["verify"], platformCrypto);
  return webcrypto.subtle.verify(SIGNING_ALGORITHM, publicKey, signature, probe);
}

async function loadCa(dir: string, domains: readonly string[], log: Logger): Promise<TeamCa> {
  const certPath = join(dir, CA_CERT_FILE);
  const keyPath = join(dir, CA_KEY_FILE);
  const mode = statSync(keyPath).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    chmodSync(keyPath, 0o600);
    log.warn({ path: keyPath, mode: mode.toString(8) }, "CA key was readable by others; mode set to 0600");
  }
  const certPem = readFileSync(certPath, "utf8");
  let cert: x509.X509Certificate;
  let privateKey: webcrypto.CryptoKey;
  try {
    cert = new x509.X509Certificate(certPem);
    const der = x509.PemConverter.decodeFirst(readFileSync(keyPath, "utf8"));
    privateKey = await webcrypto.subtle.importKey("pkcs8", der, KEY_ALGORITHM, false, ["sign"]);
  } catch (cause) {
    throw new CaError(`${dir}: unreadable CA certificate or key (${(cause as Error).message})`, { cause });
  }
  if (!(await keyMatchesCert(privateKey, cert))) throw new CaError(`${dir}: ca.key does not belong to ca.crt`);
  const permitted = permittedDomainsOf(cert);
  if (permitted === undefined) throw new CaError(`${dir}: the CA has no nameConstraints; move the directory away to create a constrained CA`);
  const uncovered = domains.filter((d) => !isWithinDomains(d, permitted));
  if (uncovered.length > 0) {
    throw new CaError(
      `${dir}: the CA may only sign for ${permitted.join(", ")}, but INTERCEPT_DOMAINS also lists ${uncovered.join(", ")}. ` +
        "Either fix INTERCEPT_DOMAINS or move the CA directory away to create a new CA (every member must then install the new certificate).",
    );
  }
  if (cert.notAfter.getTime() < Date.now() + 30 * 24 * 3600_000) log.warn({ notAfter: cert.notAfter.toISOString() }, "team CA expires within 30 days");
  return { certPem, cert, privateKey, permittedDomains: permitted };
}

/** Loads the team CA from `dir`, creating it (and the directory) on first use. */
export async function loadOrCreateCa(dir: string, domains: readonly string[], log: Logger): Promise<{ ca: TeamCa; created: boolean }> {
  const certPath = join(dir, CA_CERT_FILE);
  const keyPath = join(dir, CA_KEY_FILE);
  const haveCert = existsSync(certPath);
  const haveKey = existsSync(keyPath);
  if (haveCert && haveKey) return { ca: await loadCa(dir, domains, log), created: false };
  // A key without its certificate: another proxy is creating the CA right now, or one file was lost.
  if (haveKey && !haveCert && (await waitForFile(certPath))) return { ca: await loadCa(dir, domains, log), created: false };
  if (haveCert || haveKey) {
    throw new CaError(`${dir}: found ${haveCert ? CA_CERT_FILE : CA_KEY_FILE} without ${haveCert ? CA_KEY_FILE : CA_CERT_FILE}; restore the missing file or move the directory away`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const { ca, keyPem } = await createCa(domains);
  // The key's link is the commit point: it fails when another proxy linked its key first.
  const tmpKey = `${keyPath}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(tmpKey, keyPem, { mode: 0o600, flag: "wx" });
  chmodSync(tmpKey, 0o600);
  try {
    linkSync(tmpKey, keyPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    if (!(await waitForFile(certPath))) throw new CaError(`${dir}: another process created ${CA_KEY_FILE} but no ${CA_CERT_FILE} appeared`);
    return { ca: await loadCa(dir, domains, log), created: false };
  } finally {
    unlinkSync(tmpKey);
  }
  writeAtomically(certPath, ca.certPem, 0o644);
  log.info({ dir, domains, fingerprintSha256: await fingerprint(ca.cert) }, "created team CA");
  return { ca, created: true };
}

/** How long a proxy waits for the certificate of a CA another proxy is creating. */
const CA_CREATION_WAIT_MS = 10_000;

async function waitForFile(path: string): Promise<boolean> {
  const deadline = Date.now() + CA_CREATION_WAIT_MS;
  while (!existsSync(path)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** SHA-256 fingerprint, colon-separated upper-case hex (what OS trust dialogs show). */
export async function fingerprint(cert: x509.X509Certificate): Promise<string> {
  const digest = Buffer.from(await cert.getThumbprint("SHA-256", platformCrypto));
  return [...digest].map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join(":");
}
