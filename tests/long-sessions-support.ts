/**
 * Shared pieces of the long-session end-to-end tests: tool output large
 * enough to fill a small context window, and readers of what the store and
 * the fake client kept.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { agent, type tools } from "@byok/cursor-protocol";
import type { ExecHandlers, RunResult } from "@byok/test-support/fake-cursor";
import type { GatewayHarness } from "@byok/test-support/gateway-harness";
import { execArgs, readSuccess } from "./tools-support.ts";

/** A file of `lines` plain English lines (about 16 o200k tokens per line). */
export function bigFile(name: string, lines: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) out.push(`${name} line ${i}: the quick brown fox jumps over the lazy dog beside the quiet river bank.`);
  return out.join("\n");
}

/** Read execs answered with bigFile(path, lines). */
export function readsOf(lines: number): ExecHandlers {
  return {
    readArgs: async (ctx) => {
      const { path } = execArgs<tools.ReadArgs>(ctx);
      await ctx.reply(readSuccess(path, bigFile(path, lines)));
    },
  };
}

/** Interaction updates of a run by case, in order. */
export function updateCases(result: Pick<RunResult, "timeline">): string[] {
  return result.timeline.flatMap((e) => (e.kind === "frame" && e.message.message.case === "interactionUpdate" ? [e.message.message.value.message.case ?? ""] : []));
}

/** The summary the client keeps for a checkpoint (its ConversationSummary blob). */
export function clientSummary(gw: GatewayHarness, client: { blobs: { get(id: Uint8Array): Uint8Array | undefined } }, state: agent.ConversationStateStructure): string | undefined {
  void gw;
  if (state.summary === undefined) return undefined;
  const bytes = client.blobs.get(state.summary);
  return bytes === undefined ? undefined : fromBinary(agent.ConversationSummarySchema, bytes).summary;
}

export async function revisionCount(gw: GatewayHarness): Promise<number> {
  const rows = await gw.sql<{ n: number }>("SELECT count(*)::int AS n FROM revisions");
  return rows[0]?.n ?? 0;
}
