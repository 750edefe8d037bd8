/**
 * One accounting path for every client, end to end (whole gateway in-process,
 * real Postgres and NATS, mock LLM): an OpenAI client on the HTTP front is
 * charged to the same ledger and limits as a Cursor run, and refused with
 * 429 + Retry-After where Cursor gets its usage-limit error; a team's model
 * restriction shows in Cursor's model list and refuses the other models on
 * both paths; each client's calls are recorded (and grouped) under its own
 * client kind: cursor, acp, openai-api, anthropic-api.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { UsageBucket, UsageGroup } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { parsePricePerMillion, parseUsd } from "@byok/platform";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { minuteStartClock } from "@byok/test-support/minute-clock";
import { providerFixture } from "@byok/test-support/fixtures";
import { AcpEditor } from "./acp-editor.ts";

const FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const OTHER_MODEL = "byok-test-other";

let gw: GatewayHarness;
beforeAll(async () => {
  gw = await startGateway({
    acpAdapter: true,
    // The per-minute limit below sees one minute window: the store's clock starts one second into a minute.
    storeNow: minuteStartClock(),
    model: { price: { input: "2.5", output: "10" } },
    extraModels: [{ id: OTHER_MODEL, displayName: "Other model", upstreamModel: "gpt-4o-mini", contextWindow: 128_000 }],
    env: { providerGateway: { INBOUND_PORT: "0", INBOUND_KEY_CACHE_MS: "1" }, cursorAdapter: { MODEL_LIST_TTL_MS: "1" } },
  });
});
afterAll(async () => {
  await gw.stop();
});

async function pickerModels(memberId: string): Promise<string[]> {
  const client = gw.client({ headers: { "x-byok-member-id": memberId } });
  const answer = await client.unary("/aiserver.v1.AiService/AvailableModels", toBinary(aiserver.AvailableModelsRequestSchema, create(aiserver.AvailableModelsRequestSchema)));
  return fromBinary(aiserver.AvailableModelsResponseSchema, answer.body).models.map((m) => m.name);
}

describe("the accounting behind every client", () => {
  it("records each client's calls under its own client kind and groups spend by it", async () => {
    const member = await gw.createMember("kim");
    for (let i = 0; i < 4; i++) gw.llm.enqueue({ kind: "fixture", file: FIXTURE });

    const cursor = gw.client({ headers: { "x-byok-member-id": member.memberId } });
    const run = await cursor.conversation().send("hello from Cursor", { modelId: gw.modelId }).finished;
    expect(run.end, run.describe()).toMatchObject({ kind: "ok" });

    const acp = gw.acp!;
    const editor = AcpEditor.start({ gatewayUrl: acp.gatewayUrl, key: member.key, caFile: acp.caFile });
    try {
      await editor.initialize();
      const { sessionId } = await editor.newSession("/home/dev/project");
      expect((await editor.prompt(sessionId, "hello from Zed")).stopReason).toBe("end_turn");
    } finally {
      await editor.close();
    }

    const openai = new OpenAI({ apiKey: member.key, baseURL: `${gw.inboundUrl}/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "hello from an OpenAI app" }] });
    const anthropic = new Anthropic({ authToken: member.key, apiKey: null, baseURL: gw.inboundUrl, maxRetries: 0 });
    await anthropic.messages.create({ model: gw.modelId, max_tokens: 256, messages: [{ role: "user", content: "hello from Claude Code" }] });

    const rows = await waitFor(async () => {
      const ledger = await gw.store("listLedger", { memberId: member.memberId });
      return ledger.entries.length === 4 ? ledger.entries : undefined;
    }, "four ledger rows");
    // Newest first.
    expect(rows.map((r) => r.clientKind)).toEqual(["anthropic-api", "openai-api", "acp", "cursor"]);
    expect(rows.map((r) => (r.runId === "" ? "request" : "run"))).toEqual(["request", "request", "run", "run"]);

    const now = Date.now();
    const series = await gw.store("spendSeries", {
      groupBy: UsageGroup.CLIENT,
      bucket: UsageBucket.DAY,
      since: new Date(now - 86_400_000).toISOString(),
      until: new Date(now + 86_400_000).toISOString(),
      memberId: member.memberId,
    });
    expect(series.error).toBeUndefined();
    const callsByClient: Record<string, number> = {};
    for (const p of series.points) callsByClient[p.key] = (callsByClient[p.key] ?? 0) + p.calls;
    expect(callsByClient).toEqual({ acp: 1, "anthropic-api": 1, cursor: 1, "openai-api": 1 });
  });

  it("charges an HTTP client's calls to the ledger and refuses the one over its request limit with 429 and Retry-After", async () => {
    const member = await gw.createMember("hana");
    expect((await gw.store("setMemberLimits", { limits: { memberId: member.memberId, requestsPerMinute: 1 } })).error).toBeUndefined();
    const openai = new OpenAI({ apiKey: member.key, baseURL: `${gw.inboundUrl}/v1`, maxRetries: 0 });
    const upstreamBefore = gw.llm.requests.length;
    // One answer: the refused second call must not reach the mock (nothing stays queued for the next test).
    gw.llm.enqueue({ kind: "fixture", file: FIXTURE });

    let text = "";
    for await (const chunk of await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "weather?" }], stream: true })) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).not.toBe("");

    const second = await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "and now?" }], stream: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(second).toBeInstanceOf(OpenAI.RateLimitError);
    const refused = second as InstanceType<typeof OpenAI.RateLimitError>;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers?.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.message).toMatch(/Your limit of 1 requests per minute is reached; it resets at/);
    expect(gw.llm.requests.length - upstreamBefore).toBe(1);

    const rows = await waitFor(async () => {
      const ledger = await gw.store("listLedger", { memberId: member.memberId });
      return ledger.entries.length === 1 ? ledger.entries : undefined;
    }, "the HTTP call in the ledger");
    // 14 input tokens at $2.5/M + 30 output tokens at $10/M (the fixture's usage).
    const expected = 14n * (parsePricePerMillion("2.5") as bigint) + 30n * (parsePricePerMillion("10") as bigint);
    expect(rows[0]).toMatchObject({ clientKind: "openai-api", modelId: gw.modelId, outcome: "ok", runId: "" });
    expect(rows[0]?.callRef).toMatch(/^request:/);
    expect(parseUsd(rows[0]?.costUsd ?? "")).toBe(expected);
  });

  it("holds the concurrent-run limit on the HTTP front: a second request waits for no slot (429), the slot frees when the stream ends or the client goes", async () => {
    const member = await gw.createMember("lou");
    expect((await gw.store("setMemberLimits", { limits: { memberId: member.memberId, concurrentRuns: 1 } })).error).toBeUndefined();
    const openai = new OpenAI({ apiKey: member.key, baseURL: `${gw.inboundUrl}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ authToken: member.key, apiKey: null, baseURL: gw.inboundUrl, maxRetries: 0 });
    /** A streamed request's text, or undefined while it is refused for the concurrent-run limit. */
    const admittedText = async (content: string): Promise<string | undefined> => {
      try {
        let text = "";
        for await (const chunk of await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content }], stream: true })) text += chunk.choices[0]?.delta.content ?? "";
        return text;
      } catch (err) {
        if (err instanceof OpenAI.RateLimitError) return undefined;
        throw err;
      }
    };
    const refusedWhileHeld = async (): Promise<void> => {
      const err = await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "me too" }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toMatch(/Your limit of 1 concurrent run is reached \(1 running\)/);
      // Anthropic clients get their own error body.
      const anthropicErr = await anthropic.messages.create({ model: gw.modelId, max_tokens: 64, messages: [{ role: "user", content: "me too" }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(anthropicErr).toBeInstanceOf(Anthropic.RateLimitError);
      expect((anthropicErr as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    };

    // 1. A stream in flight holds the slot; it frees when the stream ends.
    const held = gw.llm.enqueue({ kind: "fixture", file: FIXTURE, holdAfterEvents: 1 });
    const first = await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "long answer" }], stream: true });
    await held.held;
    const upstreamBefore = gw.llm.requests.length;
    await refusedWhileHeld();
    expect(gw.llm.requests.length).toBe(upstreamBefore);
    held.release();
    for await (const chunk of first) void chunk;
    gw.llm.enqueue({ kind: "fixture", file: FIXTURE });
    expect(await waitFor(() => admittedText("after"), "the slot freed after the stream ended")).not.toBe("");

    // 2. A client that goes away mid-stream frees the slot too.
    const abandoned = gw.llm.enqueue({ kind: "fixture", file: FIXTURE, holdAfterEvents: 1 });
    const controller = new AbortController();
    const gone = await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "never mind" }], stream: true }, { signal: controller.signal });
    await abandoned.held;
    await refusedWhileHeld();
    controller.abort();
    void (async () => {
      for await (const chunk of gone) void chunk;
    })().catch(() => undefined);
    const upstream = await abandoned.request;
    await waitFor(() => upstream.aborted, "the upstream call abandoned");
    abandoned.release();
    gw.llm.enqueue({ kind: "fixture", file: FIXTURE });
    expect(await waitFor(() => admittedText("again"), "the slot freed after the client went away")).not.toBe("");
    // The slot of the last request goes back to the store after its stream ended (not on the answer's path).
    await waitFor(async () => (await gw.sql<{ n: number }>("SELECT count(*)::int AS n FROM request_slots WHERE member_id = $1", [member.memberId]))[0]?.n === 0, "no slot left held");
  });

  it("shows a member only its team's models in Cursor's list and refuses the others on the HTTP front", async () => {
    const member = await gw.createMember("ivo");
    expect(await pickerModels(member.memberId)).toEqual([gw.modelId, OTHER_MODEL]);
    const team = await gw.store("createTeam", { name: "restricted", allowedModels: { modelIds: [OTHER_MODEL] } });
    await gw.store("setMemberTeam", { memberId: member.memberId, teamId: team.team?.teamId ?? "" });
    await waitFor(async () => (await pickerModels(member.memberId)).length === 1, "the team's list in Cursor's picker");
    expect(await pickerModels(member.memberId)).toEqual([OTHER_MODEL]);

    const openai = new OpenAI({ apiKey: member.key, baseURL: `${gw.inboundUrl}/v1`, maxRetries: 0 });
    // The accounting's member policy may be up to ACCOUNTING_POLICY_TTL_MS old: wait for the refusal.
    const refusal = await waitFor(
      async () => {
        const err = await openai.chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "hi" }] }).then(
          () => undefined,
          (e: unknown) => e,
        );
        return err instanceof OpenAI.PermissionDeniedError ? err : undefined;
      },
      "the team's restriction in the accounting",
      15_000,
    );
    expect(refusal.message).toMatch(/not available to team "restricted"/);
  });
});
