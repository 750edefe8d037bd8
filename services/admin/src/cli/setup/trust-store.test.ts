import { describe, expect, it } from "vitest";
import { trustPlan, type TrustHost } from "./trust-store.ts";

const host = (overrides: Partial<TrustHost>): TrustHost => ({ platform: "linux", home: "/home/m", isRoot: false, hasUpdateCaCertificates: false, hasUpdateCaTrust: false, ...overrides });

describe("the trust-store command per OS", () => {
  it("Debian/Ubuntu: update-ca-certificates, with sudo for a normal user", () => {
    const plan = trustPlan(host({ hasUpdateCaCertificates: true }), "/home/m/.config/byok-gateway/ca.crt");
    expect(plan).toMatchObject({ kind: "commands", needsRoot: true });
    if (plan.kind === "commands") {
      expect(plan.steps).toEqual([["cp", "/home/m/.config/byok-gateway/ca.crt", "/usr/local/share/ca-certificates/byok-gateway-ca.crt"], ["update-ca-certificates"]]);
      expect(plan.display).toBe("sudo cp /home/m/.config/byok-gateway/ca.crt /usr/local/share/ca-certificates/byok-gateway-ca.crt && sudo update-ca-certificates");
    }
    const asRoot = trustPlan(host({ hasUpdateCaCertificates: true, isRoot: true }), "/root/ca.crt");
    expect(asRoot.kind === "commands" && asRoot.display).not.toMatch(/sudo/);
  });

  it("Fedora/RHEL: update-ca-trust with the anchors directory", () => {
    const plan = trustPlan(host({ hasUpdateCaTrust: true }), "/tmp/ca.crt");
    expect(plan.kind === "commands" && plan.steps).toEqual([["cp", "/tmp/ca.crt", "/etc/pki/ca-trust/source/anchors/byok-gateway-ca.crt"], ["update-ca-trust"]]);
  });

  it("macOS: security add-trusted-cert into the login keychain; Windows: certutil into the user's Root store", () => {
    const mac = trustPlan(host({ platform: "darwin", home: "/Users/m" }), "/Users/m/ca.crt");
    expect(mac).toMatchObject({ kind: "commands", needsRoot: false, steps: [["security", "add-trusted-cert", "-r", "trustRoot", "-p", "ssl", "-k", "/Users/m/Library/Keychains/login.keychain-db", "/Users/m/ca.crt"]] });
    const windows = trustPlan(host({ platform: "win32", home: "C:\\Users\\m" }), "C:\\Users\\m\\ca.crt");
    expect(windows).toMatchObject({ kind: "commands", needsRoot: false, steps: [["certutil", "-user", "-addstore", "Root", "C:\\Users\\m\\ca.crt"]] });
    expect(windows.kind === "commands" && windows.display).toMatch(/Import-Certificate/);
  });

  it("says what to do where it knows no command", () => {
    expect(trustPlan(host({}), "/tmp/ca.crt")).toMatchObject({ kind: "unsupported" });
  });
});
