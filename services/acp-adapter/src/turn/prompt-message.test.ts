import { describe, expect, it } from "vitest";
import { parseRunId, UserOrigin } from "@byok/contracts";
import { PromptContentError, promptMessage, titleOf } from "./prompt-message.ts";

const RUN = parseRunId("run-abc");

describe("prompt -> user message", () => {
  it("keeps typed text as is and turns references, attachments and images into parts", () => {
    const message = promptMessage(RUN, [
      { type: "text", text: "Fix the bug" },
      { type: "resource_link", name: "main.ts", uri: "file:///w/main.ts" },
      { type: "resource", resource: { uri: "file:///w/util.ts", text: "export {}" } },
      { type: "image", mimeType: "image/png", data: Buffer.from([1, 2, 3]).toString("base64") },
    ]);
    if (message.body.case !== "user") throw new Error("not a user message");
    expect(message.body.value.clientId).toBe("user:run-abc");
    expect(message.body.value.origin).toBe(UserOrigin.USER);
    const parts = message.body.value.content.map((p) => p.part);
    expect(parts[0]).toEqual({ case: "text", value: expect.objectContaining({ text: "Fix the bug" }) });
    expect(parts[1]?.case === "text" && parts[1].value.text).toBe('<file_reference name="main.ts" uri="file:///w/main.ts" />');
    expect(parts[2]?.case === "text" && parts[2].value.text).toBe('<attached_file uri="file:///w/util.ts">\nexport {}\n</attached_file>');
    expect(parts[3]?.case === "image" && [...parts[3].value.data]).toEqual([1, 2, 3]);
  });

  it("refuses audio and empty prompts", () => {
    expect(() => promptMessage(RUN, [{ type: "audio", mimeType: "audio/wav", data: "" }])).toThrow(PromptContentError);
    expect(() => promptMessage(RUN, [{ type: "text", text: "" }])).toThrow(PromptContentError);
  });

  it("titles a session with the first line of its first prompt", () => {
    expect(titleOf([{ type: "text", text: "  Refactor the parser\nand more" }])).toBe("Refactor the parser");
    expect(titleOf([{ type: "text", text: "x".repeat(100) }])).toHaveLength(80);
    expect(titleOf([])).toBeUndefined();
  });
});
