/** CLI commands that read what happened (runs, spend, prompt cache, ledger, audit) and run the retention job (command-table.ts lists every command). */
import type { AuditJson, RunJson } from "../actions/admin-json.ts";
import { formatCacheTables } from "./cache-table.ts";
import { command, range, rangeFlags, str, teamFlag } from "./command-spec.ts";
import { cell, textTable } from "./text-table.ts";

function runLine(r: RunJson): string[] {
  const usd = r.costUsd !== undefined ? `$${r.costUsd}${r.unknownCostCalls > 0 ? "+?" : ""}` : r.unknownCostCalls > 0 ? "unknown" : "-";
  return [
    r.startedAt,
    r.runId,
    r.memberId,
    cell(r.modelId),
    r.status + (r.failureKind ? ` (${r.failureKind})` : ""),
    r.durationMs !== undefined ? `${(r.durationMs / 1000).toFixed(1)}s` : "-",
    `${cell(r.usage.inputTokens)}/${cell(r.usage.outputTokens)}`,
    usd,
  ];
}

export const runs = command({
  words: ["runs"],
  args: [],
  flags: {
    running: { type: "boolean" },
    member: { type: "string", hint: "<id>" },
    ...teamFlag,
    limit: { type: "string", hint: "<n>" },
    before: { type: "string", hint: "<time>" },
  },
  action: "recentRuns",
  summary: "recent runs: status, failure kind, duration, tokens, cost (--running: in flight)",
  input: (_args, flags) => ({ running: flags["running"] === true, memberId: str(flags, "member"), teamId: str(flags, "team"), limit: str(flags, "limit"), before: str(flags, "before") }),
  text: ({ runs }) => textTable(["STARTED", "RUN", "MEMBER", "MODEL", "STATUS", "TIME", "IN/OUT", "COST"], runs.map(runLine), "no runs"),
});

export const spend = command({
  words: ["spend"],
  args: [],
  flags: {
    group: { type: "string", hint: "<member|team|model|client>" },
    bucket: { type: "string", hint: "<hour|day>" },
    ...rangeFlags,
    member: { type: "string", hint: "<id>" },
    ...teamFlag,
    model: { type: "string", hint: "<id>" },
  },
  action: "spendSeries",
  summary: "spend and tokens per hour/day by member, team, model or client kind (default: 7 days by day)",
  input: (_args, flags) => ({
    group: flags["group"],
    bucket: flags["bucket"],
    ...range(flags),
    memberId: str(flags, "member"),
    teamId: str(flags, "team"),
    modelId: str(flags, "model"),
  }),
  text: ({ group, points }) =>
    textTable(
      ["BUCKET", group.toUpperCase(), "CALLS", "COST", "INPUT", "OUTPUT"],
      points.map((p) => [p.bucketStart, p.key, String(p.calls), `$${p.costUsd}${p.unknownCostCalls > 0 ? ` (+${p.unknownCostCalls} unknown)` : ""}`, cell(p.inputTokens), cell(p.outputTokens)]),
      "no model calls in the range",
    ),
});

export const cache = command({
  words: ["cache"],
  args: [],
  flags: {
    member: { type: "string", hint: "<id>" },
    ...rangeFlags,
    conversations: { type: "string", hint: "<n>" },
  },
  action: "cacheUsage",
  summary: "prompt cache: cached / input per model and per conversation (default: the 20 newest)",
  input: (_args, flags) => ({ memberId: str(flags, "member"), ...range(flags), conversations: str(flags, "conversations") }),
  text: (report) => formatCacheTables(report),
});

export const ledger = command({
  words: ["ledger"],
  args: [],
  flags: {
    run: { type: "string", hint: "<run id>" },
    member: { type: "string", hint: "<id>" },
    ...rangeFlags,
    limit: { type: "string", hint: "<n>" },
  },
  action: "listLedger",
  summary: "ledger rows, one per model call (best with --json)",
  input: (_args, flags) => ({ runId: str(flags, "run"), memberId: str(flags, "member"), ...range(flags), limit: str(flags, "limit") }),
  text: ({ entries }) =>
    textTable(
      ["STARTED", "CALL", "MEMBER", "MODEL", "OUTCOME", "COST"],
      entries.map((e) => [String(e["startedAt"]), String(e["callRef"]), String(e["memberId"]), String(e["modelId"]), String(e["outcome"]), e["costUsd"] === undefined ? "unknown" : `$${String(e["costUsd"])}`]),
      "no ledger rows",
    ),
});

function auditSubject(e: AuditJson): string {
  return [e.memberId && `member ${e.memberId}`, e.teamId && `team ${e.teamId}`, e.keyId && `key ${e.keyId}`, e.modelId && `model ${e.modelId}`, e.runId && `run ${e.runId}`]
    .filter(Boolean)
    .join(", ");
}

export const audit = command({
  words: ["audit"],
  args: [],
  flags: {
    action: { type: "string", hint: "<prefix>" },
    member: { type: "string", hint: "<id>" },
    ...rangeFlags,
    limit: { type: "string", hint: "<n>" },
    before: { type: "string", hint: "<id>" },
  },
  action: "listAudit",
  summary: "the audit log: admin actions and run starts, newest first",
  input: (_args, flags) => ({
    action: str(flags, "action"),
    memberId: str(flags, "member"),
    ...range(flags),
    limit: str(flags, "limit"),
    beforeId: str(flags, "before"),
  }),
  text: ({ entries }) => textTable(["ID", "AT", "ACTION", "BY", "SUBJECT", "DETAILS"], entries.map((e) => [String(e.id), e.at, e.action, e.actor, cell(auditSubject(e)), JSON.stringify(e.details)]), "nothing recorded"),
});

export const retentionRun = command({
  words: ["retention", "run"],
  args: [],
  flags: {},
  action: "purgeContent",
  summary: "delete conversation content older than each team's retention now",
  input: () => ({}),
  text: ({ purge }) =>
    `retention: ${purge.conversations} conversations purged (${purge.messages} messages, ${purge.revisions} revisions, ${purge.toolRounds} tool rounds, ${purge.toolResults} tool results, ${purge.blobs} blobs)\n`,
});

