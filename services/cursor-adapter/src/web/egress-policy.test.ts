import { describe, expect, it } from "vitest";
import { EgressPolicy } from "./egress-policy.ts";

const open = new EgressPolicy({ allowHosts: ["*"], denyHosts: [], allowNetworks: [] });

function verdict(policy: EgressPolicy, url: string): string {
  const v = policy.checkUrl(new URL(url));
  return v.kind === "allowed" ? "allowed" : v.message;
}

describe("EgressPolicy", () => {
  it("refuses loopback, private, link-local and other special addresses by default, in every spelling", () => {
    expect(verdict(open, "http://127.0.0.1:8080/")).toBe("127.0.0.1 is a loopback address, which the gateway does not connect to");
    expect(verdict(open, "http://2130706433/")).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(verdict(open, "http://[::1]/")).toMatch(/::1 is a loopback address/);
    expect(verdict(open, "http://[::ffff:127.0.0.1]/")).toMatch(/loopback address/);
    expect(verdict(open, "http://10.1.2.3/")).toMatch(/a private address/);
    expect(verdict(open, "http://192.168.0.10/")).toMatch(/a private address/);
    expect(verdict(open, "http://172.20.0.1/")).toMatch(/a private address/);
    expect(verdict(open, "http://169.254.169.254/latest/meta-data")).toMatch(/a link-local address/);
    expect(verdict(open, "http://[fe80::1]/")).toMatch(/a link-local address/);
    expect(verdict(open, "http://[fd12::1]/")).toMatch(/unique local/);
    expect(verdict(open, "http://100.64.0.1/")).toMatch(/carrier-grade NAT/);
    expect(verdict(open, "http://0.0.0.0/")).toMatch(/this network/);
    expect(verdict(open, "http://93.184.215.14/")).toBe("allowed");
    expect(open.checkAddress("2606:4700::6810:85e5").kind).toBe("allowed");
  });

  it("allows a special network only when allowNetworks lists it", () => {
    const loopback = new EgressPolicy({ allowHosts: ["*"], denyHosts: [], allowNetworks: ["127.0.0.0/8"] });
    expect(verdict(loopback, "http://127.0.0.1:8080/")).toBe("allowed");
    expect(verdict(loopback, "http://10.0.0.1/")).toMatch(/private address/);
    expect(loopback.checkAddress("::1").kind).toBe("refused");
  });

  it("matches host patterns (deny wins) and refuses other schemes and credentials", () => {
    const policy = new EgressPolicy({ allowHosts: ["docs.example.com", "*.github.io"], denyHosts: ["evil.github.io"], allowNetworks: [] });
    expect(verdict(policy, "https://DOCS.example.com./page")).toBe("allowed");
    expect(verdict(policy, "https://me.github.io/")).toBe("allowed");
    expect(verdict(policy, "https://github.io/")).toBe("the host github.io is not in the gateway's list of allowed hosts");
    expect(verdict(policy, "https://evil.github.io/")).toBe("the host evil.github.io is denied by the gateway's policy");
    expect(verdict(policy, "https://example.com/")).toMatch(/not in the gateway's list of allowed hosts/);
    expect(verdict(open, "ftp://example.com/")).toMatch(/ftp: URLs are not fetched/);
    expect(verdict(open, "https://u:p@example.com/")).toMatch(/user name or password/);
  });
});
