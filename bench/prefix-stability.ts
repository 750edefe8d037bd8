/**
 * Prefix stability of the requests the gateway sends, per endpoint kind.
 *
 * A 20-turn conversation (each turn: one tool round with a Read of a file,
 * then a text answer) runs through the whole gateway (fake Cursor client ->
 * adapter -> run worker -> provider gateway -> mock LLM, real Postgres and
 * NATS) on a model whose context window is small enough that the history is
 * compacted once or twice on the way. The mock reports input tokens counted
 * from each request body (about 4 bytes per token), as an endpoint would.
 *
 * For every model call it prints the share of the previous call's body
 * (without its closing brackets) that is a byte-exact prefix of this call's
 * body. The target is 100 % on every call after the first, except the call
 * after a compaction (the reset) and the summary call itself (not compared).
 * Endpoints: openai-chat, openai-responses, anthropic (automatic breakpoint)
 * and anthropic with explicit block breakpoints. Numbers are printed, not
 * asserted.
 *
 *   npm run bench -- prefix-stability
 *
 * Environment (optional): BENCH_TURNS (20), BENCH_CONTEXT_WINDOW (12000),
 * BENCH_FILE_LINES (40).
 */
import type { MockEndpoint, RecordedRequest } from "@byok/test-support/mock-llm";
import { startGateway } from "@byok/test-support/gateway-harness";
import { providerStream, type StreamAnswer } from "@byok/test-support/provider-streams";
import type { ExecHandlers } from "@byok/test-support/fake-cursor";
import type { tools } from "@byok/cursor-protocol";
import { machineContext, renderTable } from "./support/report.ts";

const env = process.env;
const TURNS = Number(env["BENCH_TURNS"] ?? 20);
const WINDOW = Number(env["BENCH_CONTEXT_WINDOW"] ?? 12_000);
const FILE_LINES = Number(env["BENCH_FILE_LINES"] ?? 40);

interface Variant {
  readonly label: string;
  readonly endpoint: MockEndpoint;
  readonly model: Record<string, unknown>;
}

const VARIANTS: readonly Variant[] = [
  { label: "openai-chat", endpoint: "openai-chat", model: {} },
  { label: "openai-responses", endpoint: "openai-responses", model: {} },
  { label: "anthropic (automatic)", endpoint: "anthropic", model: { upstreamModel: "claude-sonnet-4-5", maxOutputTokens: 8192 } },
  { label: "anthropic (blocks)", endpoint: "anthropic", model: { upstreamModel: "claude-sonnet-4-5", maxOutputTokens: 8192, promptCacheBreakpoints: "blocks" } },
];

function file(path: string, turn: number): string {
  return Array.from({ length: FILE_LINES }, (_, i) => `${path} (${turn}) line ${i + 1}: const value${i} = compute(${i}, "${path}");`).join("\n");
}

const reads: ExecHandlers = {
  readArgs: async (ctx) => {
    const { path, toolCallId } = ctx.exec.message.value as tools.ReadArgs;
    const content = file(path, Number(/_(\d+)$/.exec(toolCallId)?.[1] ?? 0));
    await ctx.reply({
      message: { case: "readResult", value: { result: { case: "success", value: { path, totalLines: FILE_LINES, fileSize: BigInt(content.length), output: { case: "content", value: content } } } } },
    });
  },
};

/** Share of `previous` (without its closing brackets) that `current` starts with. */
function prefixShare(previous: string, current: string): number {
  const base = previous.replace(/[\]}]+$/, "");
  let same = 0;
  const max = Math.min(base.length, current.length);
  while (same < max && base.charCodeAt(same) === current.charCodeAt(same)) same++;
  return base.length === 0 ? 1 : same / base.length;
}

function endsOnToolResult(request: RecordedRequest): boolean {
  const body = request.body as { messages?: Array<{ role?: string; content?: unknown }>; input?: Array<{ type?: string }> };
  if (body.input !== undefined) return body.input.at(-1)?.type === "function_call_output";
  const last = body.messages?.at(-1);
  if (last?.role === "tool") return true;
  return Array.isArray(last?.content) && (last.content as Array<{ type?: string }>).at(-1)?.type === "tool_result";
}

function isSummaryCall(request: RecordedRequest): boolean {
  return !Array.isArray((request.body as { tools?: unknown }).tools);
}

async function runVariant(variant: Variant): Promise<string[][]> {
  const gw = await startGateway({ endpoint: variant.endpoint, model: { contextWindow: WINDOW, ...variant.model } });
  try {
    let n = 0;
    let turn = 0;
    // One responder for every call: a summary for a summary call, a text answer after a tool result, else a Read.
    const respond = (request: RecordedRequest) => {
      n += 1;
      const input = Math.ceil(request.rawBody.length / 4);
      const reply: StreamAnswer = isSummaryCall(request)
        ? { text: `Summary of the work so far (call ${n}): files were read turn by turn.` }
        : endsOnToolResult(request)
          ? { text: `Turn ${turn}: read file${turn}.ts.` }
          : { call: { id: `call_${turn}`, name: "Read", args: { path: `/home/dev/project/src/file${turn}.ts` } } };
      return providerStream(variant.endpoint, `r${n}`, reply, { input, output: 20, cacheRead: Math.floor(input * 0.8) });
    };
    const chat = gw.client().conversation();
    for (turn = 1; turn <= TURNS; turn++) {
      while (gw.llm.pending(variant.endpoint) < 4) gw.llm.enqueue({ kind: "respond", endpoint: variant.endpoint, respond });
      const result = await chat.send(`Read src/file${turn}.ts and tell me what it defines.`, { modelId: gw.modelId, onExec: reads }).finished;
      if (result.end.kind !== "ok") throw new Error(`${variant.label} turn ${turn} ended with ${JSON.stringify(result.end)}`);
    }
    const requests = gw.llm.requestsTo(variant.endpoint);
    const rows: string[][] = [];
    let previousModelCall: RecordedRequest | undefined;
    let afterSummary = false;
    requests.forEach((request, i) => {
      const summary = isSummaryCall(request);
      let share = "-";
      let kind = "model";
      if (summary) {
        kind = "summary";
        afterSummary = true;
      } else {
        if (previousModelCall !== undefined) share = `${(prefixShare(previousModelCall.rawBody, request.rawBody) * 100).toFixed(2)}%`;
        if (afterSummary) kind = "after reset";
        afterSummary = false;
        previousModelCall = request;
      }
      rows.push([variant.label, String(i + 1), kind, String(request.rawBody.length), share]);
    });
    return rows;
  } finally {
    await gw.stop();
  }
}

const machine = machineContext();
console.log(`prefix stability: ${TURNS} turns with a tool round each, context window ${WINDOW} tokens, ${FILE_LINES}-line files; ${machine.cores} cores, Node ${machine.node}`);
for (const variant of VARIANTS) {
  const rows = await runVariant(variant);
  console.log(`\n${variant.label}`);
  console.log(renderTable(["endpoint", "call", "kind", "body bytes", "prefix of previous"], rows));
  const model = rows.filter((r) => r[2] === "model" && r[4] !== "-");
  const full = model.filter((r) => r[4] === "100.00%").length;
  console.log(`calls compared: ${model.length}; at 100 %: ${full}; compactions: ${rows.filter((r) => r[2] === "summary").length}`);
}
