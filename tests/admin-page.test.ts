/**
 * The admin page in a real browser (Debian's chromium, driven by
 * playwright-core) against the whole gateway in-process: log in with the
 * admin token, create a member on the page, run a turn with that member's key
 * through the edge proxy, find it in the recent runs, and see the spend plot
 * draw it. Screenshots of the page are written to .tmp/ (gitignored) as test
 * artifacts. Without /usr/bin/chromium (outside CI, which installs it) the
 * test is skipped and says so.
 */
import { existsSync, mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { providerFixture } from "@byok/test-support/fixtures";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { loadConfig as loadAdminConfig } from "../services/admin/src/config.ts";
import { startAdminService, type RunningAdminService } from "../services/admin/src/service.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../.tmp/", import.meta.url).pathname;
const TOKEN = "browser-test-admin-token-0123456789abcdef";
const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
/** USD per million tokens: the fixture's few tokens cost a visible amount. */
const PRICE = { input: "1000", output: "4000" };

/** The part of an HTMLCanvasElement the pixel check uses (this project's TypeScript has no DOM types). */
interface PaintedCanvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: "2d"): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}

if (!existsSync(CHROMIUM)) console.warn(`admin page test skipped: no ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);

describe.skipIf(!existsSync(CHROMIUM))("admin page in a browser", () => {
  let gw: GatewayHarness;
  let admin: RunningAdminService;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    gw = await startGateway({ edgeProxy: true, model: { price: PRICE } });
    admin = await startAdminService(
      loadAdminConfig({ NATS_URL: gw.bus.natsUrl, BUS_PREFIX: gw.bus.prefix, ADMIN_TOKEN: TOKEN, ADMIN_PORT: "0", LOG_LEVEL: process.env["HARNESS_LOG_LEVEL"] || "silent" }),
    );
    profile = await mkdtemp(join(tmpdir(), "byok-chromium-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1360, height: 900 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await admin?.stop();
    await gw?.stop();
  });

  it("logs in with the admin token, creates a member, and shows that member's turn in recent runs and the spend plot", async () => {
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));

    // Without a session the page sends the login form; a wrong token stays there.
    await page.goto(admin.url);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill("#token", "not-the-token");
    await page.click("button[type=submit]");
    await page.waitForSelector("#login-error:not([hidden])");
    await page.fill("#token", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForSelector("body[data-rendered=overview]");

    // A member created on the page gets a key, shown once.
    await page.click("a[data-tab=members]");
    await page.waitForSelector("body[data-rendered=members]");
    await page.fill("#member-form input[name=name]", "alice");
    await page.click("#member-form button[type=submit]");
    const key = (await page.textContent("#new-secret", { timeout: 10_000 }))?.trim() ?? "";
    expect(key.length).toBeGreaterThan(20);
    await page.waitForSelector("#members tr[data-key] >> text=alice");
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-members.png"), fullPage: true });

    // Alice runs a turn with that key through the edge proxy, as her Cursor would.
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = gw.edge!.client({ name: "alice", key });
    const result = await client.conversation().send("hello", { modelId: gw.modelId }).finished;
    expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(result.text).toBe(readChatFixture(TEXT_FIXTURE).text);

    // The overview lists the run (member, model, status, cost) and plots its spend.
    await page.click("a[data-tab=overview]");
    await page.click("#refresh");
    const row = page.locator("#recent-runs tbody tr").first();
    await row.locator("text=alice").waitFor({ timeout: 15_000 });
    const cells = await row.locator("td").allTextContents();
    expect(cells).toContain("alice");
    expect(cells).toContain(gw.modelId);
    expect(cells.join(" ")).toMatch(/completed/);
    expect(cells.join(" ")).toMatch(/\$\d+\.\d+/);

    const spend = page.locator("#spend-chart");
    // Read through the locator: a string predicate is evaluated in the page, and the page's CSP (script-src
    // 'self') refuses that eval whenever the first check does not already pass.
    await expect.poll(async () => Number((await spend.getAttribute("data-total")) ?? 0), { timeout: 15_000 }).toBeGreaterThan(0);
    // Not only data in the chart object: its bars are painted on the canvas in the first series colour (#4f46e5).
    const painted = await spend.evaluate((canvas: PaintedCanvas) => {
      const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - 0x4f) < 12 && Math.abs(data[i + 1]! - 0x46) < 12 && Math.abs(data[i + 2]! - 0xe5) < 12 && data[i + 3]! > 200) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(200);
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-overview.png"), fullPage: true });

    // A team with a retention period, and a monthly budget for alice that shows what she spent.
    await page.click("a[data-tab=teams]");
    await page.waitForSelector("body[data-rendered=teams]");
    await page.fill("#team-form input[name=name]", "platform");
    await page.fill("#team-form input[name=retentionDays]", "30");
    await page.click("#team-form button[type=submit]");
    await page.waitForSelector("#teams >> text=30 days");
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-teams.png"), fullPage: true });
    await page.click("a[data-tab=budgets]");
    await page.waitForSelector("body[data-rendered=budgets]");
    await page.selectOption("#budget-form select[name=target]", { label: "member alice" });
    await page.fill("#budget-form input[name=limitUsd]", "10");
    await page.click("#budget-form button[type=submit]");
    const budget = page.locator("#budgets tbody tr").first();
    await budget.locator("text=member alice").waitFor();
    expect((await budget.locator("td").allTextContents()).join(" ")).toMatch(/\$10\.00 .*\$0\.\d+/);
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-budgets.png"), fullPage: true });

    // Alice's keys: rotating the one she used shows a new key once and marks the old one replaced.
    page.on("dialog", (dialog) => void dialog.accept());
    await page.click("a[data-tab=members]");
    await page.click("#members tr[data-key] >> text=Keys & team");
    await page.waitForSelector("#member-detail >> text=Keys of alice");
    await page.click("#member-detail >> text=Rotate");
    await page.waitForSelector("#member-detail >> text=replaced");
    const rotated = (await page.textContent("#new-secret"))?.trim() ?? "";
    expect(rotated).not.toBe(key);
    expect(rotated.length).toBeGreaterThan(20);
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-keys.png"), fullPage: true });

    // The audit tab shows the admin actions and the run start, with who did them.
    await page.click("a[data-tab=audit]");
    await page.waitForSelector("body[data-rendered=audit]");
    await page.waitForSelector("#audit >> text=run.started");
    await page.waitForSelector("#audit >> text=member.created");
    await page.waitForSelector("#audit >> text=budget.set");
    await page.waitForSelector("#audit >> text=key.rotated");
    await page.screenshot({ path: join(ARTIFACTS, "admin-page-audit.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
