import { describe, expect, it } from "vitest";
import { parseServiceStatus, serviceStatusMessage, startFailureOf } from "./service-status.ts";

describe("service status messages", () => {
  it("round-trips a started status with its endpoints", () => {
    const message = serviceStatusMessage({ kind: "started", service: "edge-proxy", pid: 42, endpoints: { url: "http://127.0.0.1:8080" } });
    expect(parseServiceStatus(JSON.parse(JSON.stringify(message)))).toEqual({ kind: "started", service: "edge-proxy", pid: 42, endpoints: { url: "http://127.0.0.1:8080" } });
  });

  it("ignores any other IPC message", () => {
    expect(parseServiceStatus({ kind: "started" })).toBeUndefined();
    expect(parseServiceStatus("ready")).toBeUndefined();
    expect(parseServiceStatus({ byokServiceStatus: { kind: "bogus", service: "x", pid: 1 } })).toBeUndefined();
  });

  it("keeps a listen error's code, address and port, and only the first line of its message", () => {
    const err = Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:8080\n    at stack"), { code: "EADDRINUSE", address: "127.0.0.1", port: 8080 });
    expect(startFailureOf(err)).toEqual({ message: "listen EADDRINUSE: address already in use 127.0.0.1:8080", code: "EADDRINUSE", address: "127.0.0.1", port: 8080 });
    expect(startFailureOf("plain")).toEqual({ message: "plain" });
  });
});
