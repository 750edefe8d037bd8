/**
 * The egress policy of gateway-side fetches (the `web.fetch` configuration):
 * which URLs the gateway may fetch and which addresses it may connect to.
 *
 * - Schemes: http and https only; no credentials in the URL.
 * - Host names: deny patterns win over allow patterns ("*", "host" or
 *   "*.domain"); an IP literal is matched as text too.
 * - Addresses: every address a host resolves to, and an IP literal host, must
 *   lie outside the special-purpose networks (private, loopback, link-local,
 *   CGNAT, documentation, multicast, reserved, and IPv6 forms that embed an
 *   IPv4 address) unless `allowNetworks` lists a network that contains it.
 *   IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
import { BlockList, isIP } from "node:net";
import type { WebFetchConfig } from "@byok/platform";

export type PolicyVerdict = { kind: "allowed" } | { kind: "refused"; message: string };

const ALLOWED: PolicyVerdict = { kind: "allowed" };

/** Special-purpose networks with what they are (for the message the model sees). */
const SPECIAL_NETWORKS: ReadonlyArray<readonly [string, string]> = [
  ["0.0.0.0/8", "a \"this network\" address"],
  ["10.0.0.0/8", "a private address"],
  ["100.64.0.0/10", "a carrier-grade NAT address"],
  ["127.0.0.0/8", "a loopback address"],
  ["169.254.0.0/16", "a link-local address"],
  ["172.16.0.0/12", "a private address"],
  ["192.0.0.0/24", "an IETF protocol address"],
  ["192.0.2.0/24", "a documentation address"],
  ["192.88.99.0/24", "a 6to4 relay address"],
  ["192.168.0.0/16", "a private address"],
  ["198.18.0.0/15", "a benchmarking address"],
  ["198.51.100.0/24", "a documentation address"],
  ["203.0.113.0/24", "a documentation address"],
  ["224.0.0.0/4", "a multicast address"],
  ["240.0.0.0/4", "a reserved address"],
  ["::/128", "the unspecified address"],
  ["::1/128", "a loopback address"],
  ["64:ff9b::/96", "a NAT64 address"],
  ["64:ff9b:1::/48", "a NAT64 address"],
  ["100::/64", "a discard-only address"],
  ["2001::/23", "an IETF protocol address"],
  ["2001:db8::/32", "a documentation address"],
  ["2002::/16", "a 6to4 address"],
  ["fc00::/7", "a private (unique local) address"],
  ["fe80::/10", "a link-local address"],
  ["fec0::/10", "a site-local address"],
  ["ff00::/8", "a multicast address"],
];

interface Network {
  readonly list: BlockList;
  readonly label: string;
}

function networkOf(cidr: string, label: string): Network {
  const [address, bits] = cidr.split("/") as [string, string];
  const list = new BlockList();
  list.addSubnet(address, Number(bits), isIP(address) === 4 ? "ipv4" : "ipv6");
  return { list, label };
}

const SPECIAL = SPECIAL_NETWORKS.map(([cidr, label]) => networkOf(cidr, label));

export class EgressPolicy {
  readonly #allowHosts: readonly string[];
  readonly #denyHosts: readonly string[];
  readonly #allowNetworks: readonly Network[];

  constructor(config: Pick<WebFetchConfig, "allowHosts" | "denyHosts" | "allowNetworks">) {
    this.#allowHosts = config.allowHosts;
    this.#denyHosts = config.denyHosts;
    this.#allowNetworks = config.allowNetworks.map((cidr) => networkOf(cidr, "allowed"));
  }

  /** The URL itself: scheme, credentials, host name patterns, and the address when the host is an IP literal. */
  checkUrl(url: URL): PolicyVerdict {
    if (url.protocol !== "http:" && url.protocol !== "https:") return { kind: "refused", message: `${url.protocol} URLs are not fetched (http and https only)` };
    if (url.username !== "" || url.password !== "") return { kind: "refused", message: "URLs with a user name or password are not fetched" };
    const host = hostOf(url);
    if (host === "") return { kind: "refused", message: "the URL has no host" };
    if (this.#denyHosts.some((p) => matches(p, host))) return { kind: "refused", message: `the host ${host} is denied by the gateway's policy` };
    if (!this.#allowHosts.some((p) => matches(p, host))) return { kind: "refused", message: `the host ${host} is not in the gateway's list of allowed hosts` };
    return isIP(host) === 0 ? ALLOWED : this.checkAddress(host);
  }

  /** One address the gateway would connect to. */
  checkAddress(address: string): PolicyVerdict {
    const judged = embeddedIpv4(address) ?? address;
    const family = isIP(judged);
    if (family === 0) return { kind: "refused", message: `${address} is not an IP address` };
    const type = family === 4 ? "ipv4" : "ipv6";
    const special = SPECIAL.find((n) => n.list.check(judged, type));
    if (special === undefined) return ALLOWED;
    if (this.#allowNetworks.some((n) => n.list.check(judged, type))) return ALLOWED;
    return { kind: "refused", message: `${address} is ${special.label}, which the gateway does not connect to` };
  }
}

/** Lower-case host without IPv6 brackets or a trailing dot. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

function matches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx). */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower) ?? /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted?.[1] !== undefined) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] === undefined || hex[2] === undefined) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}
