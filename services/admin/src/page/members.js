// Members and their keys: create, revoke, move to a team; keys: create, rotate, revoke, expiry.
import { api } from "./api.js";
import { directory, loadDirectory, teamName } from "./directory.js";
import { badge, h, show, table } from "./dom.js";
import { date, time } from "./format.js";
import { guarded, notify, onSubmit } from "./notice.js";

let selected;

/** The one-time secret of a new or rotated key. */
function showSecret(title, secret, memberName) {
  show(
    document.getElementById("secret-box"),
    h("div", { class: "secret", role: "alert" }, h("strong", {}, title), " Shown once: give it to ", memberName, " now.", h("code", { id: "new-secret" }, secret)),
  );
}

function dateToEndOfDay(value) {
  return value ? `${value}T23:59:59Z` : "";
}

function keyStatus(k) {
  if (k.active) return badge("active");
  if (k.revokedAt) return badge(k.replacedByKeyId ? "replaced" : "revoked", k.replacedByKeyId ? "replaced" : "revoked");
  return badge("expired");
}

async function renderDetail() {
  const box = document.getElementById("member-detail");
  const member = directory.members.find((m) => m.memberId === selected);
  if (!member) {
    box.hidden = true;
    return;
  }
  const { keys } = await api.get(`/api/members/${encodeURIComponent(member.memberId)}/keys`, { all: 1 });
  const teamSelect = h("select", { name: "teamId" }, directory.teams.map((t) => h("option", { value: t.teamId, selected: t.teamId === member.teamId }, t.name)));
  const keyForm = h(
    "form",
    { class: "inline-form" },
    h("label", {}, "Label ", h("input", { name: "label", placeholder: "laptop" })),
    h("label", {}, "Expires ", h("input", { name: "expiresAt", type: "date" })),
    h("button", { type: "submit", class: "primary", disabled: !!member.revokedAt }, "New key"),
  );
  onSubmit(keyForm, async (v) => {
    const created = await api.post(`/api/members/${encodeURIComponent(member.memberId)}/keys`, { label: v.label, expiresAt: dateToEndOfDay(v.expiresAt) });
    showSecret("New key.", created.secret, member.name);
    await renderDetail();
  });
  const columns = [
    { title: "Label", cell: (k) => k.label || "–" },
    { title: "Key", cell: (k) => h("code", {}, k.keyId.slice(0, 8)) },
    { title: "Created", cell: (k) => time(k.createdAt) },
    { title: "Expires", cell: (k) => (k.expiresAt ? date(k.expiresAt) : "never") },
    { title: "Status", cell: keyStatus },
    {
      title: "",
      cell: (k) =>
        k.active
          ? h(
              "div",
              { class: "actions" },
              h("button", { class: "small", onclick: () => rotate(k, member) }, "Rotate"),
              h("button", { class: "small danger", onclick: () => revokeKey(k) }, "Revoke"),
            )
          : null,
    },
  ];
  show(
    box,
    h("div", { class: "toolbar" }, h("h3", {}, `Keys of ${member.name}`), h("label", {}, "Team ", teamSelect)),
    table(columns, keys, "No keys."),
    keyForm,
  );
  teamSelect.addEventListener("change", () =>
    guarded(async () => {
      await api.put(`/api/members/${encodeURIComponent(member.memberId)}/team`, { teamId: teamSelect.value });
      notify(`${member.name} is now in team ${teamName(teamSelect.value)}.`);
      await refreshMembers();
    }),
  );
  box.hidden = false;
}

async function rotate(key, member) {
  if (!confirm(`Rotate key ${key.label || key.keyId.slice(0, 8)} of ${member.name}? The old key stops working now.`)) return;
  await guarded(async () => {
    const rotated = await api.post(`/api/keys/${encodeURIComponent(key.keyId)}/rotate`, {});
    showSecret("Rotated key.", rotated.secret, member.name);
    await renderDetail();
  });
}

async function revokeKey(key) {
  if (!confirm(`Revoke key ${key.label || key.keyId.slice(0, 8)}? It stops working within a minute.`)) return;
  await guarded(async () => {
    await api.post(`/api/keys/${encodeURIComponent(key.keyId)}/revoke`);
    notify("Key revoked.");
    await renderDetail();
  });
}

async function revokeMember(member) {
  if (!confirm(`Revoke ${member.name}? Every key of the member stops working.`)) return;
  await guarded(async () => {
    await api.post(`/api/members/${encodeURIComponent(member.memberId)}/revoke`);
    notify(`${member.name} revoked.`);
    await refreshMembers();
  });
}

function renderList() {
  const showRevoked = document.getElementById("show-revoked").checked;
  const rows = directory.members.filter((m) => showRevoked || !m.revokedAt).map((m) => ({ ...m, __key: m.memberId }));
  const columns = [
    { title: "Name", cell: (m) => h("strong", {}, m.name) },
    { title: "Team", cell: (m) => teamName(m.teamId) },
    { title: "Created", cell: (m) => date(m.createdAt) },
    { title: "Status", cell: (m) => (m.revokedAt ? badge("revoked") : badge("active")) },
    { title: "Member id", cell: (m) => h("code", {}, m.memberId) },
    {
      title: "",
      cell: (m) =>
        h(
          "div",
          { class: "actions" },
          h("button", { class: "small", onclick: () => ((selected = m.memberId), guarded(renderDetail)) }, "Keys & team"),
          m.revokedAt ? null : h("button", { class: "small danger", onclick: () => revokeMember(m) }, "Revoke"),
        ),
    },
  ];
  show(document.getElementById("members"), table(columns, rows, "No members yet: add one above."));
}

async function refreshMembers() {
  await loadDirectory();
  renderList();
  if (selected) await renderDetail();
}

export async function renderMembers() {
  renderList();
  if (selected) await renderDetail();
}

export function bindMembers() {
  const form = document.getElementById("member-form");
  onSubmit(form, async (v) => {
    const created = await api.post("/api/members", { name: v.name, teamId: v.teamId, keyExpiresAt: dateToEndOfDay(v.keyExpiresAt) });
    showSecret(`Member ${created.member.name} created.`, created.key, created.member.name);
    form.reset();
    await refreshMembers();
  });
  document.getElementById("show-revoked").addEventListener("change", renderList);
}
