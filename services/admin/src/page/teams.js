// Teams: allowed models and content retention; create, edit, delete.
import { api } from "./api.js";
import { directory, loadDirectory } from "./directory.js";
import { badge, h, show, table } from "./dom.js";
import { count, date } from "./format.js";
import { guarded, notify, onSubmit } from "./notice.js";

/** "" = every model; otherwise comma-separated ids. */
function modelsOf(text) {
  const ids = text.split(",").map((s) => s.trim()).filter(Boolean);
  return ids.length === 0 ? null : ids;
}

function retentionOf(text) {
  return text === "" ? null : Number(text);
}

function editRow(team) {
  const form = h(
    "form",
    { class: "inline-form" },
    h("label", {}, "Name ", h("input", { name: "name", value: team.name, required: true })),
    h("label", {}, "Allowed models ", h("input", { name: "allowedModels", value: (team.allowedModels ?? []).join(", "), placeholder: "all models" })),
    h("label", {}, "Retention (days) ", h("input", { name: "retentionDays", type: "number", min: 1, value: team.retentionDays ?? "", placeholder: "keep" })),
    h("button", { type: "submit", class: "primary" }, "Save"),
  );
  onSubmit(form, async (v) => {
    await api.put(`/api/teams/${encodeURIComponent(team.teamId)}`, { name: v.name, allowedModels: modelsOf(v.allowedModels), retentionDays: retentionOf(v.retentionDays) });
    notify(`Team ${v.name} saved.`);
    await loadDirectory();
    await renderTeams();
  });
  return form;
}

async function remove(team) {
  if (!confirm(`Delete team ${team.name}? Its budgets go with it.`)) return;
  await guarded(async () => {
    await api.delete(`/api/teams/${encodeURIComponent(team.teamId)}`);
    notify(`Team ${team.name} deleted.`);
    await loadDirectory();
    await renderTeams();
  });
}

export async function renderTeams() {
  const box = document.getElementById("teams");
  const columns = [
    { title: "Name", cell: (t) => [h("strong", {}, t.name), t.isDefault ? [" ", badge("default")] : null] },
    { title: "Allowed models", cell: (t) => (t.allowedModels ? t.allowedModels.map((m) => h("code", {}, m, " ")) : h("span", { class: "muted" }, "all models")) },
    { title: "Retention", cell: (t) => (t.retentionDays ? `${t.retentionDays} days` : h("span", { class: "muted" }, "kept")) },
    { title: "Members", num: true, cell: (t) => count(t.members) },
    { title: "Created", cell: (t) => date(t.createdAt) },
    {
      title: "",
      cell: (t) =>
        h(
          "div",
          { class: "actions" },
          h("button", { class: "small", onclick: (e) => e.target.closest("tr").after(h("tr", {}, h("td", { colspan: 6 }, editRow(t)))) }, "Edit"),
          t.isDefault ? null : h("button", { class: "small danger", onclick: () => remove(t) }, "Delete"),
        ),
    },
  ];
  show(box, table(columns, directory.teams, "No teams."));
}

export function bindTeams() {
  const form = document.getElementById("team-form");
  onSubmit(form, async (v) => {
    await api.post("/api/teams", { name: v.name, allowedModels: modelsOf(v.allowedModels), retentionDays: retentionOf(v.retentionDays) });
    notify(`Team ${v.name} created.`);
    form.reset();
    await loadDirectory();
    await renderTeams();
  });
}
