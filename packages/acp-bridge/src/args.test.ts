import { describe, expect, it } from "vitest";
import { parseBridgeArgs } from "./args.ts";

describe("bridge arguments", () => {
  it("takes the gateway, key and CA from flags, and the wss endpoint from the gateway URL", () => {
    const parsed = parseBridgeArgs(["acp", "--gateway", "https://gw.team.example:8443/ignored?x=1", "--key=k1", "--ca", "/etc/team-ca.pem"], {});
    expect(parsed).toEqual({ kind: "ok", args: { url: new URL("wss://gw.team.example:8443/acp"), key: "k1", caFile: "/etc/team-ca.pem" } });
  });

  it("falls back to the environment, so the key need not be on the command line", () => {
    const parsed = parseBridgeArgs(["acp"], { BYOK_GATEWAY_URL: "https://gw:8443", BYOK_MEMBER_KEY: "k2" });
    expect(parsed.kind === "ok" && parsed.args.key).toBe("k2");
    expect(parsed.kind === "ok" && parsed.args.caFile).toBeUndefined();
  });

  it("allows plain http only for this machine", () => {
    expect(parseBridgeArgs(["acp", "--gateway", "http://127.0.0.1:8790", "--key", "k"], {})).toMatchObject({ kind: "ok", args: { url: new URL("ws://127.0.0.1:8790/acp") } });
    expect(parseBridgeArgs(["acp", "--gateway", "http://gw.team.example", "--key", "k"], {}).kind).toBe("usage");
  });

  it.each([
    [[], "usage"],
    [["serve"], "unknown command"],
    [["acp", "--gateway", "https://gw"], "member key is missing"],
    [["acp", "--key", "k"], "gateway URL is missing"],
    [["acp", "--key"], "needs a value"],
    [["acp", "--verbose"], "unknown option"],
  ])("explains a bad command line %j", (argv, text) => {
    const parsed = parseBridgeArgs(argv, {});
    expect(parsed.kind).toBe("usage");
    expect(parsed.kind === "usage" && parsed.message).toContain(text);
  });
});
