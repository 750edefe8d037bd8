import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { UserOrigin, type Message } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { contextMessage, contextToAppend, renderRequestContext } from "./request-context.ts";
import { userTurnMessage } from "./user-turn.ts";

function requestContext(env: MessageInitShape<typeof agent.RequestContextEnvSchema>): agent.RequestContext {
  return create(agent.RequestContextSchema, { env: create(agent.RequestContextEnvSchema, env) });
}

const macEnv = {
  osVersion: "darwin 24.1.0",
  shell: "/bin/zsh",
  workspacePaths: ["/Users/ana/shop", "/Users/ana/lib"],
  terminalsFolder: "/Users/ana/.cursor/projects/shop/terminals",
  timeZone: "Europe/Lisbon",
  projectFolder: "/Users/ana/.cursor/projects/shop",
};

function textOf(message: Message): string {
  const body = message.body;
  if (body.case !== "user") throw new Error("not a user message");
  return body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
}

describe("request context", () => {
  it("renders the environment as a <user_info> block with only the fields the client sent", () => {
    expect(renderRequestContext(requestContext(macEnv))).toBe(
      [
        "<user_info>",
        "OS Version: darwin 24.1.0",
        "Shell: /bin/zsh",
        "Workspace Path: /Users/ana/shop",
        "Workspace Path: /Users/ana/lib",
        "Project Folder: /Users/ana/.cursor/projects/shop",
        "Terminals Folder: /Users/ana/.cursor/projects/shop/terminals",
        "Time Zone: Europe/Lisbon",
        "</user_info>",
      ].join("\n"),
    );
    expect(renderRequestContext(requestContext({ osVersion: "linux", shell: "" }))).toBe("<user_info>\nOS Version: linux\n</user_info>");
    expect(renderRequestContext(requestContext({}))).toBeUndefined();
    expect(renderRequestContext(undefined)).toBeUndefined();
  });

  it("builds a context-origin message whose id is the digest of its text", () => {
    const text = renderRequestContext(requestContext(macEnv))!;
    const message = contextMessage(text);
    expect(message.body).toMatchObject({
      case: "user",
      value: { origin: UserOrigin.CONTEXT, clientId: `request-context:${createHash("sha256").update(text).digest("hex")}` },
    });
    expect(textOf(message)).toBe(text);
  });

  it("appends context only when it differs from the latest context message in the history", () => {
    const first = contextToAppend(requestContext(macEnv), []);
    expect(first).toBeDefined();
    const user = userTurnMessage(create(agent.UserMessageSchema, { text: "hi", messageId: "m1" }), "fallback", () => undefined);
    const history = [first!, user];

    expect(contextToAppend(requestContext(macEnv), history)).toBeUndefined();

    const moved = contextToAppend(requestContext({ ...macEnv, shell: "/bin/bash" }), history);
    expect(moved).toBeDefined();
    expect(textOf(moved!)).toContain("Shell: /bin/bash");

    // Going back to the first environment is a change relative to the latest one.
    const back = contextToAppend(requestContext(macEnv), [...history, moved!]);
    expect(back).toBeDefined();
    expect(textOf(back!)).toBe(textOf(first!));
  });

  it("renders the user turn as <user_query> text plus images", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0]);
    const fetched = new Uint8Array([0x47, 0x49, 0x46, 0x38]);
    const message = userTurnMessage(
      create(agent.UserMessageSchema, {
        text: "fix the bug",
        messageId: "6f2b",
        selectedContext: {
          selectedImages: [
            { uuid: "a", mimeType: "image/png", data: png },
            { uuid: "b", data: jpeg },
            { uuid: "c", blobId: new Uint8Array(32).fill(7) },
            { uuid: "d", blobId: new Uint8Array(32).fill(9) },
          ],
        },
      }),
      "fallback",
      (id) => (id[0] === 7 ? fetched : undefined),
    );
    expect(message.body.case).toBe("user");
    const user = message.body.value as { clientId: string; origin: UserOrigin; content: Array<{ part: { case: string; value: { text?: string; mimeType?: string } } }> };
    expect(user.clientId).toBe("6f2b");
    expect(user.origin).toBe(UserOrigin.USER);
    expect(user.content[0]!.part.value.text).toBe("<user_query>\nfix the bug\n</user_query>");
    expect(user.content.slice(1).map((p) => p.part.value.mimeType)).toEqual(["image/png", "image/jpeg", "image/gif"]);

    const anonymous = userTurnMessage(create(agent.UserMessageSchema, { text: "x" }), "user:r1", () => undefined);
    expect(anonymous.body.value).toMatchObject({ clientId: "user:r1" });
  });
});
