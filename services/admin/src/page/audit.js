// The audit log (admin actions and run starts) and the retention job's "run now".
import { api } from "./api.js";
import { memberName, teamName } from "./directory.js";
import { h, show, table } from "./dom.js";
import { time } from "./format.js";
import { guarded, notify } from "./notice.js";

function subject(entry) {
  const parts = [];
  if (entry.memberId) parts.push(`member ${memberName(entry.memberId)}`);
  if (entry.teamId) parts.push(`team ${teamName(entry.teamId)}`);
  if (entry.keyId) parts.push(`key ${entry.keyId.slice(0, 8)}`);
  if (entry.modelId) parts.push(`model ${entry.modelId}`);
  if (entry.runId) parts.push(`run ${entry.runId.slice(0, 10)}`);
  return parts.join(", ") || "–";
}

function details(entry) {
  const shown = Object.entries(entry.details ?? {}).filter(([, v]) => v !== null && v !== undefined && v !== "");
  if (shown.length === 0) return "";
  return h("code", {}, shown.map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join("  "));
}

export async function renderAudit() {
  const action = document.getElementById("audit-action").value;
  const { entries } = await api.get("/api/audit", { action, limit: 200 });
  const columns = [
    { title: "Time", cell: (e) => time(e.at) },
    { title: "Action", cell: (e) => h("strong", {}, e.action) },
    { title: "By", cell: (e) => e.actor },
    { title: "Subject", cell: subject },
    { title: "Details", cell: details },
  ];
  show(document.getElementById("audit"), table(columns, entries, "Nothing recorded yet."));
}

export function bindAudit() {
  document.getElementById("audit-action").addEventListener("change", () => guarded(renderAudit));
  document.getElementById("retention-run").addEventListener("click", () =>
    guarded(async () => {
      const { purge } = await api.post("/api/retention/run");
      notify(`Retention: ${purge.conversations} conversations purged (${purge.messages} messages, ${purge.blobs} blobs, ${purge.toolResults} tool results).`);
      await renderAudit();
    }),
  );
}
