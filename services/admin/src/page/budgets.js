// Budgets (USD per member or team, optionally per model, per UTC day/week/month) and member rate limits.
import { api } from "./api.js";
import { memberName, teamName } from "./directory.js";
import { h, show, table } from "./dom.js";
import { time, usd } from "./format.js";
import { guarded, notify, onSubmit } from "./notice.js";

function usedBar(budget) {
  const limit = Number(budget.limitUsd);
  const used = Number(budget.chargedUsd || 0);
  const share = limit > 0 ? Math.min(1, used / limit) : 1;
  return h(
    "div",
    { title: `${usd(budget.chargedUsd)} of ${usd(budget.limitUsd)}` },
    h("div", { class: `bar ${used >= limit ? "over" : ""}` }, h("span", { dataset: { share: share.toFixed(3) } })),
  );
}

async function remove(budget) {
  if (!confirm("Delete this budget?")) return;
  await guarded(async () => {
    await api.delete(`/api/budgets/${encodeURIComponent(budget.budgetId)}`);
    notify("Budget deleted.");
    await renderBudgets();
  });
}

async function renderLimits() {
  const form = document.getElementById("limits-form");
  const memberId = form.elements.memberId.value;
  if (!memberId) return;
  const { limits } = await api.get(`/api/members/${encodeURIComponent(memberId)}/limits`);
  for (const name of ["requestsPerMinute", "tokensPerMinute", "concurrentRuns"]) form.elements[name].value = limits[name] ?? "";
}

export async function renderBudgets() {
  const { budgets } = await api.get("/api/budgets");
  const columns = [
    { title: "For", cell: (b) => (b.scope === "team" ? `team ${teamName(b.teamId)}` : `member ${memberName(b.memberId)}`) },
    { title: "Model", cell: (b) => (b.modelId ? h("code", {}, b.modelId) : h("span", { class: "muted" }, "every model")) },
    { title: "Period", cell: (b) => b.period },
    { title: "Limit", num: true, cell: (b) => usd(b.limitUsd) },
    { title: "Used this window", num: true, cell: (b) => usd(b.chargedUsd, b.unknownCostCalls) },
    { title: "", cell: usedBar },
    { title: "Resets", cell: (b) => time(b.windowEnd) },
    { title: "", cell: (b) => h("div", { class: "actions" }, h("button", { class: "small danger", onclick: () => remove(b) }, "Delete")) },
  ];
  show(document.getElementById("budgets"), table(columns, budgets, "No budgets: members may spend without a cap."));
  // Widths from data attributes (the page's CSP allows no inline styles).
  for (const span of document.querySelectorAll(".bar > span[data-share]")) span.style.width = `${Number(span.dataset.share) * 100}%`;
  await renderLimits();
}

export function bindBudgets() {
  const form = document.getElementById("budget-form");
  onSubmit(form, async (v) => {
    const [scope, id] = v.target.split(":");
    await api.put("/api/budgets", { scope, memberId: scope === "member" ? id : "", teamId: scope === "team" ? id : "", modelId: v.modelId, period: v.period, limitUsd: v.limitUsd });
    notify("Budget saved.");
    await renderBudgets();
  });
  const limits = document.getElementById("limits-form");
  limits.elements.memberId.addEventListener("change", () => guarded(renderLimits));
  onSubmit(limits, async (v) => {
    const number = (text) => (text === "" ? null : Number(text));
    await api.put(`/api/members/${encodeURIComponent(v.memberId)}/limits`, {
      requestsPerMinute: number(v.requestsPerMinute),
      tokensPerMinute: number(v.tokensPerMinute),
      concurrentRuns: number(v.concurrentRuns),
    });
    notify(`Limits of ${memberName(v.memberId)} saved.`);
  });
}
