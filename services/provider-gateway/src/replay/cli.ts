/**
 * npm run replay -- --kind <openai-chat|openai-responses|anthropic> <file.sse|file.jsonl>
 *
 * Feeds a recorded provider stream through the real adapter (over a local
 * HTTP server) and prints every ModelEvent as one JSON line (protobuf JSON of
 * byok.v1.ModelEvent), then one final line:
 *   {"outcome":"ok"|"failed","text","toolCalls","usage","replay","failure"}
 * --kind may be left out for files under a folder named after the kind.
 * Exit code: 0 ok, 1 failed outcome, 2 usage error.
 */
import { existsSync } from "node:fs";
import { create, toJson } from "@bufbuild/protobuf";
import { ModelEventSchema } from "@byok/contracts";
import { providerKindSchema } from "@byok/platform";
import { summarizeEvents } from "./call-summary.ts";
import type { ModelEventBody } from "../events.ts";
import { recordingFlavorOf, recordingFormatOf } from "./recording.ts";
import { replayRecording } from "./replay-recording.ts";

const USAGE = "usage: npm run replay -- --kind <openai-chat|openai-responses|anthropic> <file.sse|file.jsonl>";

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let kindArg: string | undefined;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg === "--kind") kindArg = args[++i];
  else if (arg.startsWith("--kind=")) kindArg = arg.slice("--kind=".length);
  else if (arg === "--help" || arg === "-h") fail("replay a recorded provider stream");
  else files.push(arg);
}
const file = files[0];
if (file === undefined || files.length > 1) fail("give exactly one recording file");
if (!existsSync(file)) fail(`no such file: ${file}`);
if (recordingFormatOf(file) === undefined) fail(`${file}: expected a .sse or .jsonl recording`);
const parsedKind = providerKindSchema.safeParse(kindArg ?? recordingFlavorOf(file));
if (!parsedKind.success) fail(kindArg === undefined ? "--kind is required for this file" : `unknown --kind ${kindArg}`);

const events: ModelEventBody[] = [];
let seq = 0n;
await replayRecording(parsedKind.data, file, (event) => {
  events.push(event);
  seq += 1n;
  process.stdout.write(`${JSON.stringify(toJson(ModelEventSchema, create(ModelEventSchema, { seq, event }), { alwaysEmitImplicit: true }))}\n`);
});
const summary = summarizeEvents(events);
const outcome = summary.outcome === "ok" ? "ok" : "failed";
process.stdout.write(
  `${JSON.stringify({ outcome, text: summary.text, toolCalls: summary.toolCalls, usage: summary.usage, replay: summary.replay, failure: summary.failure })}\n`,
);
process.exitCode = outcome === "ok" ? 0 : 1;
