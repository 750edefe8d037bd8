import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimLocalGateway, isGatewayProcess, localGatewayPath, readLocalGateway, releaseLocalGateway, updateLocalGateway } from "./local-gateway.ts";

/** A pid no process has (above the kernel's largest pid_max). */
const GONE_PID = 4_194_304 + 17;
/** Liveness as the supervisor sees it, with this test process standing in for a running gateway. */
const alive = (pid: number): boolean => pid === process.pid;

describe("the local gateway addresses file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "local-gateway-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const starting = (pid: number) => ({ pid, state: "starting" as const, startedAt: "2026-01-01T00:00:00Z" });

  it("is claimed once: a second claim while the holder lives is refused with the holder's details", () => {
    expect(readLocalGateway(dir).kind).toBe("none");
    expect(claimLocalGateway(dir, starting(process.pid), alive).kind).toBe("claimed");
    const second = claimLocalGateway(dir, starting(4321), alive);
    expect(second).toMatchObject({ kind: "taken", info: { pid: process.pid, state: "starting" } });
  });

  it("replaces a stale file (its process is gone) and an unreadable one", () => {
    writeFileSync(localGatewayPath(dir), JSON.stringify(starting(GONE_PID)));
    expect(isGatewayProcess(GONE_PID)).toBe(false);
    expect(readLocalGateway(dir).kind).toBe("stale");
    expect(claimLocalGateway(dir, starting(process.pid), alive).kind).toBe("claimed");
    expect(JSON.parse(readFileSync(localGatewayPath(dir), "utf8")).pid).toBe(process.pid);

    writeFileSync(localGatewayPath(dir), "{ half a file");
    expect(readLocalGateway(dir).kind).toBe("unreadable");
    expect(claimLocalGateway(dir, starting(process.pid), alive).kind).toBe("claimed");
  });

  it("carries the addresses once running, and is removed only by its holder", () => {
    claimLocalGateway(dir, starting(process.pid), alive);
    updateLocalGateway(dir, { ...starting(process.pid), state: "running", natsUrl: "nats://127.0.0.1:42229", busPrefix: "byok", proxyUrl: "http://127.0.0.1:8080" });
    const state = readLocalGateway(dir, alive);
    expect(state).toMatchObject({ kind: "running", info: { state: "running", natsUrl: "nats://127.0.0.1:42229", proxyUrl: "http://127.0.0.1:8080" } });
    releaseLocalGateway(dir, GONE_PID);
    expect(readLocalGateway(dir).kind).not.toBe("none");
    releaseLocalGateway(dir, process.pid);
    expect(readLocalGateway(dir).kind).toBe("none");
  });
});
