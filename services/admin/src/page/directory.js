// Members and teams by id, for names in tables and the pickers of the forms.
import { api } from "./api.js";

export const directory = { members: [], teams: [] };

export async function loadDirectory() {
  const [members, teams] = await Promise.all([api.get("/api/members", { all: 1 }), api.get("/api/teams")]);
  directory.members = members.members;
  directory.teams = teams.teams;
  fillPickers();
}

export function memberName(id) {
  if (id === "local") return "local (no proxy)";
  return directory.members.find((m) => m.memberId === id)?.name ?? id;
}

export function teamName(id) {
  return directory.teams.find((t) => t.teamId === id)?.name ?? id ?? "–";
}

function options(select, entries) {
  const previous = select.value;
  select.replaceChildren(...entries.map(([value, text]) => new Option(text, value)));
  if (entries.some(([value]) => value === previous)) select.value = previous;
}

/** The <select>s marked data-team-select / data-member-select / data-target-select. */
export function fillPickers() {
  const active = directory.members.filter((m) => !m.revokedAt);
  for (const s of document.querySelectorAll("[data-team-select]")) options(s, directory.teams.map((t) => [t.teamId, t.name]));
  for (const s of document.querySelectorAll("[data-member-select]")) options(s, active.map((m) => [m.memberId, m.name]));
  for (const s of document.querySelectorAll("[data-target-select]")) {
    options(s, [...directory.teams.map((t) => [`team:${t.teamId}`, `team ${t.name}`]), ...active.map((m) => [`member:${m.memberId}`, `member ${m.name}`])]);
  }
}
