// The admin page: session, tabs (by URL hash) and a refresh of the visible tab.
import { api, startSession } from "./api.js";
import { bindAudit, renderAudit } from "./audit.js";
import { bindBudgets, renderBudgets } from "./budgets.js";
import { loadDirectory } from "./directory.js";
import { bindMembers, renderMembers } from "./members.js";
import { guarded } from "./notice.js";
import { bindOverview, renderOverview } from "./overview.js";
import { bindTeams, renderTeams } from "./teams.js";

const TABS = { overview: renderOverview, members: renderMembers, teams: renderTeams, budgets: renderBudgets, audit: renderAudit };

function currentTab() {
  const tab = location.hash.slice(1);
  return tab in TABS ? tab : "overview";
}

async function render() {
  const tab = currentTab();
  for (const link of document.querySelectorAll("#tabs a")) link.classList.toggle("active", link.dataset.tab === tab);
  for (const section of document.querySelectorAll("[data-section]")) section.hidden = section.dataset.section !== tab;
  document.body.dataset.tab = tab;
  await guarded(async () => {
    await TABS[tab]();
    document.body.dataset.rendered = tab;
  });
}

async function main() {
  await startSession();
  await guarded(loadDirectory);
  bindOverview(render);
  bindMembers();
  bindTeams();
  bindBudgets();
  bindAudit();
  document.getElementById("logout-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void api.logout().finally(() => location.assign("/login"));
  });
  window.addEventListener("hashchange", render);
  await render();
  // Runs in flight change by themselves: the overview refreshes every 15 s while visible.
  setInterval(() => {
    if (currentTab() === "overview" && !document.hidden) void render();
  }, 15_000);
}

void main();
