import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EMBEDDED_POSTGRES_MAIN, embeddedPostgresCommand, findOnPath, freePort, LocalInfraError, natsServerCommand, type ServerCommand } from "./local-servers.ts";
import { startServerProcess } from "./server-process.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("freePort", () => {
  it("hands out distinct ports below the kernel's ephemeral range, where no outgoing connection takes them meanwhile", async () => {
    const ports = [];
    for (let i = 0; i < 100; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(100);
    for (const port of ports) expect(port).toBeLessThan(32_768);
  });
});

describe("server commands", () => {
  it("runs nats-server with JetStream on loopback, its store and (optionally) monitoring", () => {
    const command = natsServerCommand({ executable: "/usr/sbin/nats-server", port: 4300, storeDir: "/tmp/js", monitorPort: 8300, env: {} });
    expect(command.args).toEqual(["-a", "127.0.0.1", "-p", "4300", "-m", "8300", "-js", "-sd", "/tmp/js"]);
    expect(command.url).toBe("nats://127.0.0.1:4300");
    expect(command.isReady("[1] 2026/01/01 00:00:00.000000 [INF] Server is ready")).toBe(true);
    expect(command.isReady("[INF] Starting JetStream")).toBe(false);
  });

  it("runs the embedded Postgres helper with its settings in the environment", () => {
    const command = embeddedPostgresCommand({ dataDir: "/tmp/pg", port: 5500, password: "p@ss word", database: "byok", env: { PATH: "/bin" } });
    expect(command.command).toBe(process.execPath);
    expect(command.args).toEqual([EMBEDDED_POSTGRES_MAIN]);
    expect(command.env).toMatchObject({ PATH: "/bin", EMBEDDED_PG_DIR: "/tmp/pg", EMBEDDED_PG_PORT: "5500", EMBEDDED_PG_DATABASE: "byok" });
    expect(command.url).toBe("postgres://postgres:p%40ss%20word@127.0.0.1:5500/byok");
    expect(command.isReady("embedded postgres ready on 127.0.0.1:5500, database byok, data in /tmp/pg")).toBe(true);
  });

  it("finds a command on PATH", () => {
    const dir = mkdtempSync(join(tmpdir(), "local-infra-path-"));
    dirs.push(dir);
    writeFileSync(join(dir, "fake-server"), "#!/bin/sh\n");
    chmodSync(join(dir, "fake-server"), 0o755);
    expect(findOnPath("fake-server", `/nonexistent:${dir}`)).toBe(join(dir, "fake-server"));
    expect(findOnPath("surely-not-installed-anywhere", dir)).toBeUndefined();
  });
});

/** A stand-in server: a node process that prints `lines`, then stays up until stopped. */
function scriptServer(lines: string[], readyTimeoutMs = 10_000, stayUp = true): ServerCommand {
  const script = `${lines.map((l) => `console.log(${JSON.stringify(l)});`).join("")}${stayUp ? "setInterval(() => {}, 1000);" : "process.exit(3);"}`;
  return { name: "fake", command: process.execPath, args: ["-e", script], env: {}, isReady: (l) => l === "ready", readyTimeoutMs, url: "fake://here" };
}

describe("startServerProcess", () => {
  it("resolves once the server says it is ready, and stops it", async () => {
    const server = await startServerProcess(scriptServer(["starting", "ready"]));
    expect(server.url).toBe("fake://here");
    expect(server.output()).toContain("starting");
    await server.stop();
  });

  it("reports a server that exits during start-up, with its output", async () => {
    await expect(startServerProcess(scriptServer(["bad config"], 10_000, false))).rejects.toThrow(LocalInfraError);
    await expect(startServerProcess(scriptServer(["bad config"], 10_000, false))).rejects.toThrow(/fake exited during start-up \(exit code 3\)[^]*bad config/);
  });
});
