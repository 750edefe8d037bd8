/** The replay CLI as a user runs it: a child process over a recording, JSON lines out. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { providerFixture } from "@byok/test-support/fixtures";
import { expectationFor } from "../testing/fixture-oracle.ts";

const run = promisify(execFile);
const CLI = new URL("./cli.ts", import.meta.url).pathname;

async function replay(args: string[]): Promise<{ code: number; lines: Array<Record<string, unknown>> }> {
  try {
    const { stdout } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, lines: stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, lines: failed.stdout.trim() === "" ? [] : failed.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) };
  }
}

describe("npm run replay", () => {
  it("prints the ModelEvents and a final summary for a successful recording", async () => {
    const file = providerFixture("openai-responses", "openai-gpt4o-function-call-turn1.sse");
    const { code, lines } = await replay(["--kind", "openai-responses", file]);
    const expected = expectationFor("openai-responses", file);
    expect(code).toBe(0);
    expect(lines.slice(0, -1).map((l) => l["seq"])).toEqual(lines.slice(0, -1).map((_, i) => String(i + 1)));
    expect(lines[0]).toHaveProperty("start");
    const summary = lines.at(-1) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- CLI JSON
    expect(Object.keys(summary)).toEqual(["outcome", "text", "toolCalls", "usage", "replay", "failure"]);
    expect(summary["outcome"]).toBe("ok");
    expect(summary["toolCalls"].map((c: { argumentsJson: string }) => JSON.parse(c.argumentsJson) as unknown)).toEqual(expected.toolCalls.map((c) => c.arguments));
    expect(summary["usage"]).toEqual(expected.usage);
    expect(summary["replay"]).toMatchObject({ providerKind: "openai-responses" });
    expect(summary["failure"]).toBeNull();
  });

  it("reports a failed recording with its typed failure and exit code 1", async () => {
    const file = providerFixture("anthropic", "anthropic-sonnet46-max-tokens-cache-write.jsonl");
    const { code, lines } = await replay(["--kind", "anthropic", file]);
    expect(code).toBe(1);
    expect(lines.at(-1)).toMatchObject({ outcome: "failed", text: expectationFor("anthropic", file).text, failure: { kind: "LENGTH" }, replay: null });
  });

  it("rejects an unknown kind with exit code 2", async () => {
    const { code } = await replay(["--kind", "smoke-signals", providerFixture("anthropic", "anthropic-sonnet45-text.jsonl")]);
    expect(code).toBe(2);
  });
});
