import { create } from "@bufbuild/protobuf";
import { ToolDefinitionSchema } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { RequestRejection } from "./adapter.ts";
import { toolParameters } from "./history.ts";

describe("toolParameters", () => {
  it("parses a schema text once: the same text gives the same object, a different text its own", () => {
    const text = JSON.stringify({ type: "object", properties: { path: { type: "string" } } });
    const first = toolParameters(create(ToolDefinitionSchema, { name: "read", parametersJson: text }));
    const again = toolParameters(create(ToolDefinitionSchema, { name: "read_file", parametersJson: text }));
    expect(again).toBe(first);
    expect(first).toEqual({ type: "object", properties: { path: { type: "string" } } });
    const other = toolParameters(create(ToolDefinitionSchema, { name: "list", parametersJson: JSON.stringify({ type: "object" }) }));
    expect(other).not.toBe(first);
    expect(other).toEqual({ type: "object" });
  });

  it("rejects a schema that is not a JSON object every time (nothing invalid is kept)", () => {
    for (let i = 0; i < 2; i++) {
      expect(() => toolParameters(create(ToolDefinitionSchema, { name: "bad", parametersJson: "{not json" }))).toThrow(RequestRejection);
      expect(() => toolParameters(create(ToolDefinitionSchema, { name: "bad", parametersJson: "[1]" }))).toThrow(/not a JSON object/);
    }
  });
});
