import { describe, expect, it } from "vitest";
import { create, equals, type MessageInitShape } from "@bufbuild/protobuf";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { rootBytesOf, rootJsonOf, systemRootJson } from "./root-json.ts";
import { importRootBytes, RootParseError, type RootImport } from "./root-import.ts";

const encoder = new TextEncoder();

function message(init: MessageInitShape<typeof MessageSchema>): Message {
  return create(MessageSchema, init);
}

function roundTrip(m: Message): Message {
  const imported = importRootBytes(rootBytesOf(m));
  if (imported.kind !== "messages") throw new Error(`expected messages, got ${imported.kind}`);
  expect(imported.messages).toHaveLength(1);
  return imported.messages[0]!;
}

function importJson(value: unknown): RootImport {
  return importRootBytes(encoder.encode(JSON.stringify(value)));
}

function onlyMessage(result: RootImport): Message {
  if (result.kind !== "messages" || result.messages.length !== 1) throw new Error(`unexpected import ${JSON.stringify(result)}`);
  return result.messages[0]!;
}

const userWithImage = message({
  body: {
    case: "user",
    value: {
      clientId: "6f2b5c1e-3f0e-4c36-9a39-2f5e4a1d0b7c",
      origin: UserOrigin.USER,
      content: [
        { part: { case: "text", value: { text: "<user_query>\nwhat does main.ts do?\n</user_query>" } } },
        { part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]) } } },
      ],
    },
  },
});

const assistantWithEverything = message({
  body: {
    case: "assistant",
    value: {
      content: [
        { part: { case: "reasoning", value: { text: "Look at the file first." } } },
        { part: { case: "text", value: { text: "Let me read it — ünïcode ✓" } } },
        { part: { case: "toolCall", value: { callId: "call_a\nfc_1", name: "Read", argumentsJson: '{"path":"/p/a.ts"}' } } },
        { part: { case: "toolCall", value: { callId: "call_b", name: "Grep", argumentsJson: '{"pattern": "x", "-i": true}' } } },
        { part: { case: "toolCall", value: { callId: "call_c", name: "Odd", argumentsJson: '{"b":1,"1":2,"n":1.0}' } } },
        { part: { case: "toolCall", value: { callId: "call_d", name: "Broken", argumentsJson: '{"unterminated' } } },
      ],
      replay: { providerKind: "anthropic", routeId: "claude-sonnet", data: new Uint8Array([1, 2, 3, 250, 0]) },
    },
  },
});

describe("root JSON projection", () => {
  it("writes the documented AI-SDK shape with a fixed key order", () => {
    const user = message({
      body: { case: "user", value: { clientId: "m1", origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text: "hi" } } }] } },
    });
    expect(rootJsonOf(user)).toBe('{"role":"user","id":"m1","content":[{"type":"text","text":"hi"}]}');

    const assistant = message({
      body: {
        case: "assistant",
        value: {
          content: [
            { part: { case: "reasoning", value: { text: "r" } } },
            { part: { case: "text", value: { text: "t" } } },
            { part: { case: "toolCall", value: { callId: "c1", name: "Read", argumentsJson: '{"path":"a"}' } } },
          ],
          replay: { providerKind: "openai-chat", routeId: "r1", data: new Uint8Array([104, 105]) },
        },
      },
    });
    expect(rootJsonOf(assistant)).toBe(
      '{"role":"assistant","id":"1","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"t"},' +
        '{"type":"tool-call","toolCallId":"c1","toolName":"Read","args":{"path":"a"}}],' +
        '"providerOptions":{"byok":{"replay":{"kind":"openai-chat","route":"r1","data":"aGk="}}}}',
    );

    const tool = message({ body: { case: "toolResult", value: { callId: "c1", toolName: "Read", content: "file body", isError: false } } });
    expect(rootJsonOf(tool)).toBe(
      '{"role":"tool","id":"c1","content":[{"type":"tool-result","toolCallId":"c1","toolName":"Read","result":"file body",' +
        '"experimental_content":[{"type":"text","text":"file body"}],"isError":false}]}',
    );
    expect(systemRootJson("You are a test.")).toBe('{"role":"system","content":"You are a test."}');
  });

  it("leaves providerOptions out of an assistant without replay state", () => {
    const plain = message({ body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text: "done" } } }] } } });
    expect(rootJsonOf(plain)).toBe('{"role":"assistant","id":"1","content":[{"type":"text","text":"done"}]}');
  });

  it.each([
    ["user text + image", userWithImage],
    ["assistant with reasoning, tools, odd arguments and replay", assistantWithEverything],
    [
      "context message",
      message({
        body: {
          case: "user",
          value: { clientId: "request-context:abc", origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text: "<user_info>\n</user_info>" } } }] },
        },
      }),
    ],
    [
      "user message whose id does not imply its origin",
      message({
        body: { case: "user", value: { clientId: "request-context:typed", origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text: "x" } } }] } },
      }),
    ],
    [
      "runtime message",
      message({
        body: { case: "user", value: { clientId: "runtime:ev1", origin: UserOrigin.RUNTIME, content: [{ part: { case: "text", value: { text: "done" } } }] } },
      }),
    ],
    [
      "failed tool result with unicode and a lone surrogate",
      message({ body: { case: "toolResult", value: { callId: "call_x\nfc_y", toolName: "Shell", content: 'exit 1: "é" \ud800 ✓', isError: true } } }),
    ],
    ["empty assistant", message({ body: { case: "assistant", value: { content: [] } } })],
  ])("round-trips exactly: %s", (_name, original) => {
    const back = roundTrip(original);
    expect(equals(MessageSchema, back, original)).toBe(true);
    // Same message, same bytes: the blob id is stable.
    expect(Buffer.from(rootBytesOf(back)).equals(Buffer.from(rootBytesOf(original)))).toBe(true);
  });

  it("keeps argument text that JSON.stringify would change", () => {
    const json = JSON.parse(rootJsonOf(assistantWithEverything)) as { content: Array<Record<string, unknown>> };
    const calls = json.content.filter((p) => p["type"] === "tool-call");
    expect(calls[0]).not.toHaveProperty("providerOptions");
    expect(calls[1]).toMatchObject({ args: { pattern: "x", "-i": true }, providerOptions: { byok: { argumentsJson: '{"pattern": "x", "-i": true}' } } });
    expect(calls[3]).toMatchObject({ args: {}, providerOptions: { byok: { argumentsJson: '{"unterminated' } } });
  });
});

describe("importing roots written by others", () => {
  it("recognises the system root", () => {
    expect(importJson({ role: "system", content: "You are Cursor." })).toEqual({ kind: "system", text: "You are Cursor." });
    expect(importJson({ role: "system", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toEqual({ kind: "system", text: "ab" });
  });

  it("maps a Cursor-server assistant root with signatures and cursor provider options", () => {
    const imported = onlyMessage(
      importJson({
        role: "assistant",
        id: "1",
        content: [
          { type: "reasoning", text: "thinking…", signature: "EqQBCkYIBxgC", providerOptions: { cursor: { modelName: "claude-4-sonnet" } } },
          { type: "redacted-reasoning", data: "opaque" },
          { type: "text", text: "Let me look." },
          { type: "tool-call", toolCallId: "toolu_1", toolName: "Read", args: { path: "/p/a.ts", limit: 20 } },
        ],
        providerOptions: { cursor: { pendingToolCallStartedAtMs: 1760000000000 } },
      }),
    );
    expect(imported.body.case).toBe("assistant");
    const assistant = imported.body.value as Extract<Message["body"], { case: "assistant" }>["value"];
    expect(assistant.replay).toBeUndefined();
    expect(assistant.content.map((p) => p.part.case)).toEqual(["reasoning", "text", "toolCall"]);
    expect(assistant.content[2]!.part.value).toMatchObject({ callId: "toolu_1", name: "Read", argumentsJson: '{"path":"/p/a.ts","limit":20}' });
  });

  it("maps string content, AI-SDK v5 input/output and object results", () => {
    const user = onlyMessage(importJson({ role: "user", content: "plain question" }));
    expect(user.body).toMatchObject({ case: "user", value: { clientId: "", origin: UserOrigin.USER } });
    expect(user.body.value?.content).toHaveLength(1);

    const context = onlyMessage(importJson({ role: "user", id: "request-context:9f", content: "<user_info>x</user_info>" }));
    expect(context.body).toMatchObject({ case: "user", value: { origin: UserOrigin.CONTEXT } });

    const v5call = onlyMessage(importJson({ role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "Glob", input: { glob_pattern: "*.ts" } }] }));
    expect((v5call.body.value as { content: Array<{ part: { value: unknown } }> }).content[0]!.part.value).toMatchObject({ argumentsJson: '{"glob_pattern":"*.ts"}' });

    const results = importJson({
      role: "tool",
      id: "c",
      content: [
        { type: "tool-result", toolCallId: "c", toolName: "Glob", result: { files: ["a.ts"] } },
        { type: "tool-result", toolCallId: "d", toolName: "Shell", output: { type: "error-text", value: "boom" } },
        { type: "tool-result", toolCallId: "e", toolName: "Read", output: { type: "json", value: [1, 2] } },
      ],
    });
    expect(results.kind).toBe("messages");
    const bodies = (results as { messages: Message[] }).messages.map((m) => m.body.value);
    expect(bodies).toMatchObject([
      { callId: "c", toolName: "Glob", content: '{"files":["a.ts"]}', isError: false },
      { callId: "d", toolName: "Shell", content: "boom", isError: true },
      { callId: "e", toolName: "Read", content: "[1,2]", isError: false },
    ]);
  });

  it("decodes data-URL and file images and drops remote ones", () => {
    const m = onlyMessage(
      importJson({
        role: "user",
        id: "u",
        content: [
          { type: "image", image: "data:image/jpeg;base64,/9j/AA==" },
          { type: "file", mediaType: "image/webp", data: "UklGRg==" },
          { type: "image", image: "https://example.com/x.png" },
          { type: "file", mediaType: "application/pdf", data: "JVBE" },
        ],
      }),
    );
    const parts = (m.body.value as { content: Array<{ part: { case: string; value: { mimeType?: string; data?: Uint8Array } } }> }).content;
    expect(parts.map((p) => [p.part.case, p.part.value.mimeType])).toEqual([
      ["image", "image/jpeg"],
      ["image", "image/webp"],
    ]);
    expect(Buffer.from(parts[0]!.part.value.data!).toString("base64")).toBe("/9j/AA==");
  });

  it("is deterministic for foreign roots", () => {
    const root = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "T", args: { z: 1, a: [true, null] } }] };
    const a = onlyMessage(importJson(root));
    const b = onlyMessage(importJson(root));
    expect(equals(MessageSchema, a, b)).toBe(true);
  });

  it("ignores unknown roles and rejects bytes that are not a JSON object", () => {
    expect(importJson({ role: "developer", content: "x" }).kind).toBe("ignored");
    expect(() => importRootBytes(encoder.encode("not json"))).toThrow(RootParseError);
    expect(() => importRootBytes(encoder.encode("[1,2]"))).toThrow(RootParseError);
    expect(() => importRootBytes(new Uint8Array([0xff, 0xfe]))).toThrow(RootParseError);
  });
});
