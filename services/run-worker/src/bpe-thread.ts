/**
 * The BPE tokenizer off the main thread: building an encoder parses its rank
 * table (a second or more of CPU), and encoding a long history takes a while
 * too; on the worker's event loop either would stall every run it owns. This
 * thread loads an encoding on first use and answers batches of token counts.
 * Protocol: { id, encoding, texts } -> { id, counts } or { id, error }.
 */
import { parentPort } from "node:worker_threads";
import { Tiktoken } from "js-tiktoken/lite";

type Encoding = "o200k_base" | "cl100k_base";
const encoders = new Map<Encoding, Tiktoken>();

async function encoder(name: Encoding): Promise<Tiktoken> {
  let found = encoders.get(name);
  if (found === undefined) {
    const ranks = name === "o200k_base" ? await import("js-tiktoken/ranks/o200k_base") : await import("js-tiktoken/ranks/cl100k_base");
    found = new Tiktoken(ranks.default);
    encoders.set(name, found);
  }
  return found;
}

parentPort?.on("message", (request: { id: number; encoding: Encoding; texts: string[] }) => {
  encoder(request.encoding).then(
    (enc) => parentPort?.postMessage({ id: request.id, counts: request.texts.map((t) => (t === "" ? 0 : enc.encode(t, [], []).length)) }),
    (error: unknown) => parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
