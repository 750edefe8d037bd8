/**
 * The OpenAI/Anthropic-compatible API end to end: the whole gateway
 * in-process on real Postgres and NATS, a member created in the store with
 * its key, the official SDKs as clients and the mock LLM (the harness's
 * openai-chat model) as upstream. A revoked or unknown key gets 401.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectationFor } from "../services/provider-gateway/src/testing/fixture-oracle.ts";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";

let gw: GatewayHarness;
let key: string;
beforeAll(async () => {
  gw = await startGateway({ env: { providerGateway: { INBOUND_PORT: "0", INBOUND_KEY_CACHE_MS: "1" } } });
  const created = await gw.store("createMember", { name: "alice" });
  key = created.key;
});
afterAll(async () => {
  await gw.stop();
});

const FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");

it("a member key from the store works for an OpenAI client (same shape) and an Anthropic client (translated)", async () => {
  const url = gw.inboundUrl as string;
  gw.llm.enqueue({ kind: "fixture", file: FIXTURE });
  const completion = await new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 }).chat.completions.create({ model: gw.modelId, messages: [{ role: "user", content: "weather?" }] , stream: true });
  let text = "";
  for await (const chunk of completion) text += chunk.choices[0]?.delta.content ?? "";
  expect(text).toBe(expectationFor("openai-chat", FIXTURE).text);

  gw.llm.enqueue({ kind: "fixture", file: FIXTURE });
  const message = await new Anthropic({ authToken: key, apiKey: null, baseURL: url, maxRetries: 0 }).messages.stream({ model: gw.modelId, max_tokens: 256, messages: [{ role: "user", content: "weather?" }] }).finalMessage();
  expect(message.content[0]).toMatchObject({ type: "text", text: expectationFor("openai-chat", FIXTURE).text });
});

it("an unknown or revoked key is refused with 401", async () => {
  const url = gw.inboundUrl as string;
  await expect(new OpenAI({ apiKey: "bgk_not_a_member", baseURL: `${url}/v1`, maxRetries: 0 }).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  const bob = await gw.store("createMember", { name: "bob" });
  const client = new OpenAI({ apiKey: bob.key, baseURL: `${url}/v1`, maxRetries: 0 });
  await client.models.list();
  await gw.store("revokeMember", { memberId: bob.member?.memberId ?? "" });
  await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
});
