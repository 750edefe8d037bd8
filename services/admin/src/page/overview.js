// Overview: spend and token plots per member / team / model, runs in flight, recent runs.
import { api } from "./api.js";
import { bucketStarts, drawStackedBars } from "./charts.js";
import { memberName, teamName } from "./directory.js";
import { badge, h, show, table } from "./dom.js";
import { count, duration, shortId, time, tokens, usd } from "./format.js";

const RANGES = { "24h": { hours: 24, bucket: "hour" }, "7d": { hours: 24 * 7, bucket: "day" }, "30d": { hours: 24 * 30, bucket: "day" } };

function range(value) {
  const { hours, bucket } = RANGES[value] ?? RANGES["7d"];
  const step = bucket === "hour" ? 3_600_000 : 86_400_000;
  const until = new Date(Math.ceil((Date.now() + 1) / step) * step);
  const since = new Date(until.getTime() - hours * 3_600_000);
  return { since: since.toISOString(), until: until.toISOString(), bucket };
}

function keyLabel(group) {
  return group === "member" ? memberName : group === "team" ? teamName : (key) => key;
}

async function drawPlots() {
  const group = document.getElementById("group").value;
  const { since, until, bucket } = range(document.getElementById("range").value);
  const { points } = await api.get("/api/spend", { group, bucket, since, until });
  const buckets = bucketStarts(since, until, bucket);
  const label = keyLabel(group);
  drawStackedBars(document.getElementById("spend-chart"), { buckets, bucket, points, label, unit: "usd", value: (p) => Number(p.costUsd || 0) });
  drawStackedBars(document.getElementById("tokens-chart"), { buckets, bucket, points, label, unit: "tokens", value: (p) => (p.inputTokens ?? 0) + (p.outputTokens ?? 0) });
  const unknown = points.reduce((n, p) => n + (p.unknownCostCalls ?? 0), 0);
  const total = points.reduce((n, p) => n + Number(p.costUsd || 0), 0);
  const calls = points.reduce((n, p) => n + p.calls, 0);
  document.getElementById("spend-note").textContent =
    `${usd(String(total))} over ${count(calls)} model call${calls === 1 ? "" : "s"}` + (unknown > 0 ? `; ${unknown} with unknown cost are not in the bars` : "");
}

function statusOf(run) {
  return badge(run.status, run.status);
}

const RUN_COLUMNS = [
  { title: "Started", cell: (r) => time(r.startedAt) },
  { title: "Member", cell: (r) => memberName(r.memberId) },
  { title: "Model", cell: (r) => h("code", {}, r.modelId || "–") },
  { title: "Status", cell: (r) => [statusOf(r), r.failureKind ? h("span", { class: "muted" }, ` ${r.failureKind}`) : null] },
  { title: "Duration", num: true, cell: (r) => duration(r.durationMs) },
  { title: "Tokens in / out", num: true, cell: (r) => tokens(r.usage) },
  { title: "Calls", num: true, cell: (r) => count(r.modelCalls) },
  { title: "Cost", num: true, cell: (r) => usd(r.costUsd, r.unknownCostCalls) },
  { title: "Run", cell: (r) => h("code", { title: r.runId }, shortId(r.runId)) },
];

async function drawRuns() {
  const [inflight, recent] = await Promise.all([api.get("/api/runs", { running: 1, limit: 100 }), api.get("/api/runs", { limit: 50 })]);
  document.getElementById("inflight-count").textContent = `(${inflight.runs.length})`;
  show(document.getElementById("inflight"), table(RUN_COLUMNS, inflight.runs, "No run is in flight."));
  const rows = recent.runs.map((r) => ({ ...r, __key: r.runId }));
  show(document.getElementById("recent-runs"), table(RUN_COLUMNS, rows, "No runs yet."));
}

export async function renderOverview() {
  await Promise.all([drawPlots(), drawRuns()]);
}

export function bindOverview(refresh) {
  for (const id of ["range", "group"]) document.getElementById(id).addEventListener("change", refresh);
  document.getElementById("refresh").addEventListener("click", refresh);
}
