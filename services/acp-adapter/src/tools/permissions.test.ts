import { describe, expect, it } from "vitest";
import type { RequestPermissionOutcome } from "../acp/acp-types.ts";
import { askPermission, commandPermissionKey, editPermissionKey, type PermissionPorts } from "./permissions.ts";

function ports(outcome: RequestPermissionOutcome, always: string[] = []) {
  const asked: string[] = [];
  const decided: string[] = [];
  const remembered = new Set(always);
  const p: PermissionPorts = {
    ask: async (toolCall) => (asked.push(toolCall.toolCallId), outcome),
    allowedAlways: () => remembered,
    rememberAlways: (key) => void remembered.add(key),
    decided: (kind, verdict) => void decided.push(`${kind}:${verdict}`),
  };
  return { p, asked, decided, remembered };
}

const call = { toolCallId: "c1" };

describe("permissions", () => {
  it("asks once per call, remembers Always allow under the call's key and then asks no more", async () => {
    const { p, asked, decided, remembered } = ports({ outcome: "selected", optionId: "allow-always" });
    expect(await askPermission(p, commandPermissionKey("npm test -- --watch=false"), "npm", call)).toBe("allowed");
    expect(remembered.has("execute:npm")).toBe(true);
    expect(await askPermission(p, commandPermissionKey("npm run build"), "npm", call)).toBe("allowed");
    expect(asked).toEqual(["c1"]);
    expect(decided).toEqual(["execute:allowed_always", "execute:remembered"]);
  });

  it("treats reject, an option never offered and a cancelled request as no", async () => {
    expect(await askPermission(ports({ outcome: "selected", optionId: "reject-once" }).p, editPermissionKey(), "edits", call)).toBe("rejected");
    expect(await askPermission(ports({ outcome: "selected", optionId: "sure-why-not" }).p, editPermissionKey(), "edits", call)).toBe("rejected");
    expect(await askPermission(ports({ outcome: "cancelled" }).p, editPermissionKey(), "edits", call)).toBe("cancelled");
  });

  it("keys commands by their program", () => {
    expect(commandPermissionKey("  git status")).toBe("execute:git");
    expect(commandPermissionKey("rm -rf build")).not.toBe(commandPermissionKey("git clean"));
  });
});
