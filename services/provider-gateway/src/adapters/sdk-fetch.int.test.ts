/**
 * The SDK clients on the gateway's fetch against a loopback HTTP server: what
 * the adapters rely on from fetch (streamed bodies, the SDKs' abort, timeout
 * and connection error mapping, error statuses and headers) behaves as with
 * the runtime's fetch.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "@byok/test-support/infra";
import { sdkFetch } from "./sdk-fetch.ts";
import { messageWithCause } from "../upstream-errors.ts";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: Handler): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function openai(baseURL: string, timeout = 10_000): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL, maxRetries: 0, timeout, fetch: sdkFetch });
}

const chatBody = { model: "m", messages: [{ role: "user" as const, content: "hi" }], stream: true as const };

describe("the SDK clients on the gateway's fetch", () => {
  it("hands over each chunk of a stream before the server sends the next", async () => {
    const written: string[] = [];
    let next: (() => void) | undefined;
    const baseURL = await serve((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        expect(JSON.parse(body)).toMatchObject({ model: "m", stream: true });
        expect(req.headers.authorization).toBe("Bearer sk-test");
        res.writeHead(200, { "content-type": "text/event-stream" });
        let k = 0;
        next = () => {
          if (k === 3) {
            res.end();
            return;
          }
          const event = `data: {"k":${k}}\n\n`;
          written.push(event);
          res.write(event);
          k += 1;
        };
        next();
      });
    });
    const response = await openai(baseURL).chat.completions.create(chatBody).asResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    for (let k = 0; k < 3; k++) {
      const { value } = await reader.read();
      expect(decoder.decode(value)).toBe(`data: {"k":${k}}\n\n`);
      expect(written).toHaveLength(k + 1);
      next?.();
    }
    expect((await reader.read()).done).toBe(true);
  });

  it("maps the caller's abort before the answer to the SDK's user abort", async () => {
    let arrived = false;
    const baseURL = await serve(() => {
      arrived = true;
    });
    const controller = new AbortController();
    const call = openai(baseURL).chat.completions.create(chatBody, { signal: controller.signal }).asResponse();
    await waitFor(() => arrived, "the request at the server");
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
  });

  it("errors the body with an AbortError when the caller aborts mid-stream, and the server sees the request go", async () => {
    let closed = false;
    const baseURL = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: {}\n\n");
      res.on("close", () => (closed = true));
    });
    const controller = new AbortController();
    const response = await openai(baseURL).chat.completions.create(chatBody, { signal: controller.signal }).asResponse();
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
    await waitFor(() => closed, "the server to see the request closed");
  });

  it("maps a head that does not come within the SDK's timeout to its timeout error", async () => {
    const baseURL = await serve(() => undefined);
    await expect(openai(baseURL, 200).chat.completions.create(chatBody).asResponse()).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it("maps a refused connection to the SDK's connection error, with the cause", async () => {
    const baseURL = await serve(() => undefined);
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    const failure = await openai(baseURL).chat.completions.create(chatBody).asResponse().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIConnectionError);
    expect((failure as Error).cause).toMatchObject({ message: "fetch failed" });
    expect(((failure as Error).cause as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
    // What the gateway reports names the refused connect, not only "fetch failed".
    expect(messageWithCause(failure as Error)).toMatch(/^Connection error\.: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it("gives the SDKs an error status with its body and every header (Anthropic client)", async () => {
    const baseURL = await serve((req, res) => {
      req.resume();
      res.setHeader("retry-after", "7");
      res.setHeader("x-multi", ["a", "b"]);
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "slow down" } }));
    });
    const client = new Anthropic({ apiKey: "k", baseURL: baseURL.replace(/\/v1$/, ""), maxRetries: 0, fetch: sdkFetch });
    const failure = await client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.RateLimitError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).message).toContain("slow down");
    const headers = (failure as InstanceType<typeof Anthropic.APIError>).headers!;
    expect(headers.get("retry-after")).toBe("7");
    expect(headers.get("x-multi")).toBe("a, b");
  });

  it("answers a bodyless status with an empty body", async () => {
    const baseURL = await serve((req, res) => {
      req.resume();
      res.writeHead(204);
      res.end();
    });
    const response = await sdkFetch(`${baseURL}/anything`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });
});
