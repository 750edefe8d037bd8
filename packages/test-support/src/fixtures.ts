/**
 * Recorded provider streams (and the requests that produced them), kept in
 * this package under fixtures/providers/<endpoint kind>/ so that every test
 * and benchmark replays the same bytes on any machine. `.sse` files are the
 * raw response bodies; `.jsonl` files hold one event payload per line; a
 * `.request.json` beside a recording is the request that was sent.
 * `*.handwritten.*` files are written by hand for cases no provider produced
 * on demand. PROVIDER_FIXTURES_DIR overrides the directory.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { RecordingFlavor } from "@byok/provider-gateway/replay/recording";

/** The directory holding openai-chat/, openai-responses/ and anthropic/. */
export const PROVIDER_FIXTURES_DIR = process.env["PROVIDER_FIXTURES_DIR"] ?? fileURLToPath(new URL("../fixtures/providers", import.meta.url));

/** Full path of a recorded provider fixture, e.g. providerFixture("anthropic", "anthropic-sonnet45-text.jsonl"). */
export function providerFixture(endpoint: RecordingFlavor, name: string): string {
  return `${PROVIDER_FIXTURES_DIR}/${endpoint}/${name}`;
}

/** An HTTP error fixture (`*.error.json`: `{status, body}`) as a mock-llm response of `endpoint`. */
export function errorFixture(endpoint: RecordingFlavor, name: string): { kind: "error"; endpoint: RecordingFlavor; status: number; body: unknown } {
  const { status, body } = JSON.parse(readFileSync(providerFixture(endpoint, name), "utf8")) as { status: number; body: unknown };
  return { kind: "error", endpoint, status, body };
}
