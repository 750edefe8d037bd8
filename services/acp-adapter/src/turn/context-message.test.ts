import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MessageSchema } from "@byok/contracts";
import { contextDigest, contextMessage, contextText, lastContextDigest } from "./context-message.ts";

const env = { cwd: "/w", additionalDirectories: [], editor: "Zed 0.200.0" };

describe("environment context", () => {
  it("states the working directory and the editor, and names itself by its content", () => {
    expect(contextText(env)).toBe("<environment>\nWorking directory: /w\nEditor: Zed 0.200.0\n</environment>");
    expect(contextDigest({ ...env, cwd: "/other" })).not.toBe(contextDigest(env));
    expect(contextDigest({ ...env })).toBe(contextDigest(env));
  });

  it("finds the digest of the last context message in a history", () => {
    const user = create(MessageSchema, { body: { case: "user", value: { clientId: "user:run-1", content: [] } } });
    const older = contextMessage({ ...env, cwd: "/old" });
    expect(lastContextDigest([older, user, contextMessage(env), user])).toBe(contextDigest(env));
    expect(lastContextDigest([user])).toBe("");
  });
});
