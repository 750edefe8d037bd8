import { describe, expect, it } from "vitest";
import type { LocalGatewayState } from "@byok/platform/local-gateway";
import { loadConfig } from "./config.ts";
import { describeTarget, resolveTarget } from "./gateway-target.ts";

const running: LocalGatewayState = {
  kind: "running",
  path: "/repo/.data/local-gateway.json",
  info: { pid: 10, state: "running", startedAt: "2026-01-01T00:00:00Z", natsUrl: "nats://127.0.0.1:42229", busPrefix: "byok" },
};
const none: LocalGatewayState = { kind: "none", path: "/repo/.data/local-gateway.json" };
const noFlags = { natsUrl: undefined, busPrefix: undefined };

describe("which gateway the admin CLI talks to", () => {
  it("uses the running npm start gateway's recorded NATS server when nothing else is given", () => {
    const target = resolveTarget(noFlags, loadConfig({}), () => running);
    expect(target).toEqual({ kind: "found", natsUrl: "nats://127.0.0.1:42229", busPrefix: "byok", source: "/repo/.data/local-gateway.json" });
    if (target.kind === "found") expect(describeTarget(target)).toBe("nats://127.0.0.1:42229 (bus prefix byok, from /repo/.data/local-gateway.json)");
  });

  it("prefers --nats-url, then NATS_URL (compose containers), over the file", () => {
    expect(resolveTarget({ natsUrl: "nats://a:1", busPrefix: "p" }, loadConfig({ NATS_URL: "nats://b:2" }), () => running)).toMatchObject({ natsUrl: "nats://a:1", busPrefix: "p", source: "--nats-url" });
    expect(resolveTarget(noFlags, loadConfig({ NATS_URL: "nats://b:2", BUS_PREFIX: "team" }), () => running)).toMatchObject({ natsUrl: "nats://b:2", busPrefix: "team", source: "NATS_URL" });
  });

  it("never falls back to a default server: no file and no NATS_URL is an error that says what to do", () => {
    const target = resolveTarget(noFlags, loadConfig({}), () => none);
    expect(target.kind).toBe("none");
    if (target.kind === "none") expect(target.message).toMatch(/local-gateway\.json does not exist .* npm start .* --nats-url/);
    const stale = resolveTarget(noFlags, loadConfig({}), () => ({ ...running, kind: "stale" }) as LocalGatewayState);
    expect(stale.kind === "none" && stale.message).toMatch(/pid 10, which has exited/);
  });

  it("hides NATS credentials in what it prints", () => {
    const target = resolveTarget({ natsUrl: "nats://user:secret@host:4222", busPrefix: undefined }, loadConfig({}), () => none);
    if (target.kind !== "found") throw new Error("expected a target");
    expect(describeTarget(target)).not.toContain("secret");
  });
});
