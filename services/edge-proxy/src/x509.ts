/**
 * @peculiar/x509 with the Reflect metadata polyfill its dependency injection
 * (tsyringe) needs loaded first. Import the library only through this module;
 * it re-exports, by name, what the proxy uses.
 */
import "reflect-metadata";

export {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  cryptoProvider,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509CertificateGenerator,
} from "@peculiar/x509";
