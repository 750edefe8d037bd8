import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { aiserver } from "@byok/cursor-protocol";
import { concatModelLists } from "./model-list-merge.ts";
import { withHttp2ForcedOff } from "./server-config.ts";
import { unaryPayload } from "./unary-payload.ts";
import type { BufferedResponse } from "./upstream.ts";

const list = (names: string[]): Buffer =>
  Buffer.from(
    toBinary(
      aiserver.AvailableModelsResponseSchema,
      create(aiserver.AvailableModelsResponseSchema, { modelNames: names, models: names.map((name) => ({ name, defaultOn: true })), useModelParameters: true }),
    ),
  );

function answer(body: Buffer, headers: Record<string, string>, status = 200): BufferedResponse {
  return { kind: "response", status, statusMessage: "", rawHeaders: Object.entries(headers).flat(), body };
}

describe("model list concatenation", () => {
  it("yields the official models followed by the BYOK ones", () => {
    const merged = fromBinary(aiserver.AvailableModelsResponseSchema, concatModelLists(list(["claude-4", "gpt-5"]), list(["team-gpt"])));
    expect(merged.modelNames).toEqual(["claude-4", "gpt-5", "team-gpt"]);
    expect(merged.models.map((m) => m.name)).toEqual(["claude-4", "gpt-5", "team-gpt"]);
    expect(merged.useModelParameters).toBe(true);
  });
});

describe("unaryPayload", () => {
  const schema = aiserver.AvailableModelsResponseSchema;

  it("takes a plain proto body, a gzip body and an enveloped body", () => {
    const body = list(["a"]);
    expect(unaryPayload(answer(body, { "content-type": "application/proto" }), schema)).toEqual({ kind: "ok", payload: body });
    expect(unaryPayload(answer(gzipSync(body), { "content-type": "application/proto", "content-encoding": "gzip" }), schema)).toEqual({ kind: "ok", payload: body });
    const envelope = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]);
    expect(unaryPayload(answer(envelope, { "content-type": "application/connect+proto" }), schema)).toEqual({ kind: "ok", payload: body });
  });

  it("refuses errors, unknown compression, JSON and bytes that are not the expected message", () => {
    expect(unaryPayload(answer(list(["a"]), { "content-type": "application/proto" }, 401), schema)).toMatchObject({ kind: "unusable", reason: "HTTP 401" });
    expect(unaryPayload(answer(list(["a"]), { "content-type": "application/proto", "content-encoding": "zstd" }), schema)).toMatchObject({ kind: "unusable" });
    expect(unaryPayload(answer(Buffer.from("{}"), { "content-type": "application/json" }), schema)).toMatchObject({ kind: "unusable" });
    expect(unaryPayload(answer(Buffer.from([0x0a, 0xff]), { "content-type": "application/proto" }), schema)).toMatchObject({ kind: "unusable" });
    expect(unaryPayload({ kind: "failed", message: "ECONNREFUSED" }, schema)).toEqual({ kind: "unusable", reason: "ECONNREFUSED" });
  });
});

describe("server config", () => {
  it("forces HTTP/2 off and keeps every other byte, unknown fields included", () => {
    const official = Buffer.concat([
      Buffer.from(toBinary(aiserver.GetServerConfigResponseSchema, create(aiserver.GetServerConfigResponseSchema, { configVersion: "v42", http2Config: aiserver.Http2Config.FORCE_ALL_ENABLED }))),
      // field 27 (agent_url_config), length-delimited, unknown to our schema
      Buffer.from([0xda, 0x01, 0x03, 0x0a, 0x01, 0x78]),
    ]);
    const changed = withHttp2ForcedOff(official);
    expect(changed.subarray(0, official.length)).toEqual(official);
    const decoded = fromBinary(aiserver.GetServerConfigResponseSchema, changed);
    expect(decoded.http2Config).toBe(aiserver.Http2Config.FORCE_ALL_DISABLED);
    expect(decoded.configVersion).toBe("v42");
  });
});
