/// <reference lib="dom" />
/**
 * `spoolctl ui` in a real browser (README "The web view"): Debian's
 * chromium-headless-shell driven by puppeteer-core, against a real `spoolctl
 * ui` process and real workers, on the suite's store. Every page loads
 * without a console error and with labelled controls; a triage group and a
 * filtered list are retried from the page; the live tail and the "N new" bar
 * follow the queue; the graph of a failed chain shows its states; another
 * site's form, a missing token and job-supplied markup get nowhere.
 *
 * With SPOOLCTL_UI_SCREENSHOTS=DIR the page tour also saves a 1280×800
 * screenshot of every page into DIR (docs/ui/ holds the README's).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { stopProcessesOf } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";
import { startUi, type UiProcess } from "./support/web.ts";

const CHROME = process.env.SPOOLCTL_TEST_CHROME ?? "/usr/bin/chromium-headless-shell";
const q = useTempQueue({ teardown: (queue) => stopProcessesOf(queue) });
let browser: Browser;
let ui: UiProcess | null = null;
/** Console errors, page errors and failed requests of the current page. */
let troubles: string[] = [];

beforeAll(async () => {
  browser = await puppeteer.launch({
    executablePath: CHROME,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--window-size=1280,800"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  await ui?.stop();
  ui = null;
});

/** A fresh tab at 1280×800 that records what goes wrong in it. */
async function tab(): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  troubles = [];
  page.on("console", (m) => {
    if (m.type() === "error") troubles.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => troubles.push(`page error: ${e}`));
  page.on("requestfailed", (r) => {
    // A live stream the next navigation closes is not a failure.
    if (!r.url().includes("/live")) troubles.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  return page;
}

/** Opens the printed URL (which sets the cookie), then `path`. */
async function open(page: Page, path = "/"): Promise<void> {
  await page.goto(ui!.url, { waitUntil: "load" });
  if (path !== "/") await page.goto(ui!.base + path, { waitUntil: "load" });
}

/** Clicks the page's confirmation dialog's button and returns the text it asked. */
async function confirmDialog(page: Page): Promise<string> {
  await page.waitForSelector("dialog#confirm[open]", { timeout: 15_000 });
  const text = await page.$eval("#confirm-text", (e) => e.textContent ?? "");
  await page.click("#confirm-ok");
  return text;
}

/**
 * Serves `html` from another origin, opens it in a fresh tab with the UI's
 * cookie in the browser, and returns the HTTP status of the first request
 * the page made to `target` (polled for up to 20 s).
 */
async function attackStatus(html: string, target: string): Promise<number> {
  const evil = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(html, { headers: { "content-type": "text/html" } }),
  });
  const attack = await browser.newPage();
  const seen: number[] = [];
  attack.on("response", (r) => {
    if (r.url().startsWith(target)) seen.push(r.status());
  });
  try {
    // The form navigates away at once, so the first load is not awaited.
    await attack
      .goto(`http://127.0.0.1:${evil.port}/`, { waitUntil: "domcontentloaded", timeout: 20_000 })
      .catch(() => {});
    return await waitFor(`the attack page's request to ${target}`, () => seen[0], 20_000);
  } finally {
    await attack.close().catch(() => {});
    await evil.stop(true);
  }
}

/** Runs the queue's jobs to the end with one worker. */
async function drain(): Promise<void> {
  const r = await q.run(["work", "--drain"]);
  if (r.code !== 0) throw new Error(`work --drain: ${r.stderr}`);
}

describe.skipIf(!existsSync(CHROME))("spoolctl ui in a browser", () => {
  test("every page loads without a console error; controls are labelled and the keyboard reaches them", async () => {
    // A queue with something on every page: dead jobs, a failed chain in a batch, a paused lane, a schedule, a hook.
    await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 2");
    const a = await q.addJob("--batch", "release", "--key", "build", "--max-retries", "0", "--", "sh", "-c", "exit 1");
    await q.addJob("--batch", "release", "--key", "test", "--needs", "build", "--", "true");
    await q.addJob("--key", "fine", "--tag", "team=web", "--", "echo", "hello");
    await drain();
    await q.run(["pause", "deploys", "--reason", "freeze", "--for", "1h"]);
    await q.run(["schedule", "add", "nightly", "--cron", "0 3 * * *", "--", "echo", "nightly"]);
    await q.run(["hook", "add", "notify", "--on", "dead", "--", "echo", "dead"]);
    ui = await startUi(q);
    const page = await tab();
    const shots = process.env.SPOOLCTL_UI_SCREENSHOTS;
    if (shots) mkdirSync(shots, { recursive: true });
    const pages: [string, string][] = [
      ["/", "overview"],
      ["/jobs", "jobs"],
      [`/jobs/${a}`, "job"],
      ["/triage", "triage"],
      ["/batches", "batches"],
      ["/batches/release", "batch"],
      ["/lanes", "lanes"],
      ["/schedules", "schedules"],
      ["/hooks", "hooks"],
      ["/workers", "workers"],
    ];
    await open(page);
    for (const [path, name] of pages) {
      const response = await page.goto(ui.base + path, { waitUntil: "load" });
      expect([path, response?.status()]).toEqual([path, 200]);
      expect(await page.$eval("h1", (h) => h.textContent)).toBeTruthy();
      // Every form control has a label, every button a name.
      const unlabelled = await page.$$eval("input, select", (els) =>
        els
          .filter((e) => (e as HTMLInputElement).labels?.length === 0 && !e.getAttribute("aria-label"))
          .map((e) => e.outerHTML),
      );
      expect([path, unlabelled]).toEqual([path, []]);
      const nameless = await page.$$eval("button", (els) =>
        els.filter((b) => !b.textContent?.trim()).map((b) => b.id || b.outerHTML),
      );
      expect([path, nameless.filter((id) => id !== "new-show")]).toEqual([path, []]);
      if (shots) await page.screenshot({ path: join(shots, `${name}.png`) });
    }
    expect(troubles).toEqual([]);
    // The keyboard: the first Tab reaches the skip link, which moves focus to the page's content.
    await page.goto(`${ui.base}/jobs`, { waitUntil: "load" });
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    await page.close();
  }, 120_000);

  test("retrying a triage group in the page requeues exactly that group's jobs", async () => {
    const boom: number[] = [];
    for (let i = 0; i < 3; i++)
      boom.push(await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 2"));
    const other: number[] = [];
    for (let i = 0; i < 2; i++)
      other.push(await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo other >&2; exit 5"));
    await drain();
    ui = await startUi(q);
    const page = await tab();
    await open(page, "/triage");
    const group = await page.$$eval("article.group", (els) =>
      els.findIndex((e) => e.querySelector("h2")?.textContent?.includes("boom")),
    );
    expect(group).toBeGreaterThanOrEqual(0);
    const buttons = await page.$$("article.group");
    const retry = await buttons[group]!.$('button[data-verb="retry"]');
    await retry!.click();
    expect(await confirmDialog(page)).toContain("3 jobs");
    await waitFor("the group to be requeued", async () => (await q.job(boom[2]!))?.state === "queued");
    for (const id of boom) expect((await q.job(id))?.state).toBe("queued");
    for (const id of other) expect((await q.job(id))?.state).toBe("dead");
    await page.waitForFunction(() => document.getElementById("toast")?.textContent?.includes("retry: done"), {
      timeout: 15_000,
    });
    expect(troubles).toEqual([]);
    await page.close();
  }, 120_000);

  test("retry all matching: the count is previewed, confirmed, and only the matching jobs are requeued", async () => {
    const tagged: number[] = [];
    for (let i = 0; i < 4; i++) tagged.push(await q.addJob("--tag", "run=7", "--max-retries", "0", "--", "false"));
    const untagged = await q.addJob("--max-retries", "0", "--", "false");
    await drain();
    ui = await startUi(q);
    const page = await tab();
    await open(page, "/jobs?state=dead&tag=run%3D7");
    expect(await page.$$eval("#job-list tbody tr", (rows) => rows.length)).toBe(4);
    await page.click('button[data-verb="retry"][data-preview="true"]');
    expect(await confirmDialog(page)).toBe("Retry 4 jobs?");
    await waitFor("the four to be requeued", async () => {
      for (const id of tagged) if ((await q.job(id))?.state !== "queued") return false;
      return true;
    });
    expect((await q.job(untagged))?.state).toBe("dead");
    await page.close();
  }, 120_000);

  test("text search, then cancel and delete all matching, each previewed; a delete names what it closes", async () => {
    const quota: number[] = [];
    for (let i = 0; i < 3; i++)
      quota.push(
        await q.addJob(
          "--max-retries",
          "0",
          "--env",
          "MSG=Disk Quota exceeded",
          "--",
          "sh",
          "-c",
          'echo "$MSG" >&2; exit 1',
        ),
      );
    const other = await q.addJob("--max-retries", "0", "--", "false");
    await drain();
    const nightly = [await q.addJob("--key", "nightly-a", "--after", "1h", "--", "true")];
    nightly.push(await q.addJob("--key", "nightly-b", "--after", "1h", "--", "true"));
    const need = await q.addJob("--after", "1h", "--", "true");
    const dependent = await q.addJob("--needs", String(need), "--", "true");
    ui = await startUi(q);
    const page = await tab();
    await open(page, "/jobs");
    await page.type('input[name="search"]', "quota");
    await Promise.all([
      page.waitForNavigation({ waitUntil: "load" }),
      page.click('form.filters button[type="submit"]'),
    ]);
    const shown = await page.$$eval("#job-list tbody tr", (rows) => rows.map((r) => Number(r.getAttribute("data-id"))));
    expect(shown.sort()).toEqual([...quota].sort());
    await page.click('button[data-verb="delete"][data-preview="true"]');
    expect(await confirmDialog(page)).toBe("Delete 3 jobs with their history and output, for good?");
    await waitFor("the three to be deleted", async () => {
      for (const id of quota) if (await q.job(id)) return false;
      return true;
    });
    expect((await q.job(other))?.state).toBe("dead");
    await page.goto(`${ui.base}/jobs?search=NIGHTLY-`, { waitUntil: "load" });
    await page.click('button[data-verb="cancel"][data-preview="true"]');
    expect(await confirmDialog(page)).toBe("Cancel 2 jobs?");
    await waitFor("the two to be canceled", async () => {
      for (const id of nightly) if ((await q.job(id))?.state !== "canceled") return false;
      return true;
    });
    expect((await q.job(need))?.state).toBe("queued");
    await page.goto(`${ui.base}/jobs/${need}`, { waitUntil: "load" });
    await page.click('button[data-verb="delete"]');
    expect(await confirmDialog(page)).toBe(
      `Delete job ${need} with its history and output, for good? It closes 1 dependent (${dependent}).`,
    );
    // Its own page gone, the browser goes to the list.
    await page.waitForFunction(() => location.pathname === "/jobs", { timeout: 15_000 });
    expect(await q.job(need)).toBeNull();
    expect((await q.job(dependent))?.state).toBe("canceled");
    expect(troubles).toEqual([]);
    await page.close();
  }, 120_000);

  test("the live tail shows a line a running job prints, and the list shows new jobs in a bar without moving", async () => {
    const gate = join(q.dir, "go");
    const id = await q.addJob(
      "--",
      "sh",
      "-c",
      `echo first; while [ ! -e ${gate} ]; do sleep 0.02; done; echo second-line; sleep 60`,
    );
    const worker = q.spawn(["work"]);
    await waitFor("the job to run", async () => (await q.job(id))?.state === "running");
    await waitFor("its first line", async () => (await q.run(["output", String(id)])).stdout.includes("first"));
    ui = await startUi(q);
    const page = await tab();
    await open(page, `/jobs/${id}`);
    await page.waitForSelector("pre#out-stdout[data-tail]");
    expect(await page.$eval("#out-stdout", (e) => e.textContent)).toContain("first");
    const started = performance.now();
    writeFileSync(gate, "");
    await page.waitForFunction(() => document.getElementById("out-stdout")?.textContent?.includes("second-line"), {
      timeout: 15_000,
      polling: 20,
    });
    console.log(
      `live tail: the new line showed ${Math.round(performance.now() - started)} ms after the job was let go`,
    );
    // The list: a job added while it is open is counted in the bar; the rows stay as they were.
    await page.goto(`${ui.base}/jobs`, { waitUntil: "load" });
    const before = await page.$$eval("#job-list tbody tr", (rows) => rows.map((r) => r.getAttribute("data-id")));
    await q.addJob("--", "true");
    await page.waitForFunction(() => !document.getElementById("new-bar")?.hidden, { timeout: 15_000 });
    expect(await page.$eval("#new-show", (b) => b.textContent)).toBe("1 new — show");
    expect(await page.$$eval("#job-list tbody tr", (rows) => rows.map((r) => r.getAttribute("data-id")))).toEqual(
      before,
    );
    expect(troubles).toEqual([]);
    worker.kill("SIGTERM");
    await page.close();
  }, 120_000);

  test("the graph of a failed chain shows each job's state and links to it", async () => {
    const a = await q.addJob("--batch", "chain", "--key", "a", "--max-retries", "0", "--", "false");
    const b = await q.addJob("--batch", "chain", "--key", "b", "--needs", "a", "--", "true");
    const c = await q.addJob("--batch", "chain", "--key", "c", "--needs", "b", "--", "true");
    await drain();
    ui = await startUi(q);
    const page = await tab();
    await open(page, "/batches/chain");
    const nodes = await page.$$eval("svg a.node", (els) =>
      els.map((e) => [Number(e.getAttribute("data-id")), e.getAttribute("data-state")]),
    );
    expect(nodes.sort()).toEqual([
      [a, "dead"],
      [b, "canceled"],
      [c, "canceled"],
    ]);
    expect(await page.$$eval("svg path.edge", (els) => els.length)).toBe(2);
    await Promise.all([page.waitForNavigation(), page.click(`svg a.node[data-id="${b}"]`)]);
    expect(new URL(page.url()).pathname).toBe(`/jobs/${b}`);
    expect(troubles).toEqual([]);
    await page.close();
  }, 120_000);

  test("no token, another site's form and job-supplied markup get nowhere", async () => {
    const payload = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    const id = await q.addJob(
      "--tag",
      `t=${payload}`,
      "--note",
      payload,
      "--max-retries",
      "0",
      "--",
      "sh",
      "-c",
      `echo '${payload}'; echo '${payload}' >&2; exit 1`,
    );
    await drain();
    ui = await startUi(q);
    const page = await tab();
    // No token: refused, and nothing of the queue shows.
    const refused = await page.goto(`${ui.base}/jobs/${id}`, { waitUntil: "load" });
    expect(refused?.status()).toBe(401);
    expect(await page.content()).not.toContain("onerror");
    // With it: the markup is text.
    await open(page, `/jobs/${id}`);
    for (const path of [`/jobs/${id}`, "/jobs", "/triage", "/"]) {
      await page.goto(ui.base + path, { waitUntil: "load" });
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.$$eval('img[src="x"]', (els) => els.length)).toBe(0);
    }
    await page.goto(`${ui.base}/jobs/${id}`, { waitUntil: "load" });
    expect(await page.$eval("#out-stdout", (e) => e.textContent)).toContain("<script>");
    // Another site's page posts to the API with the browser's cookie, once by
    // a form and once by fetch: refused both ways, and nothing changes.
    const target = `${ui.base}/api/retry?id=${id}`;
    const attacks = [
      `<form id=f method=post action="${target}"></form><script>document.getElementById("f").submit()</script>`,
      `<script>fetch("${target}",{method:"POST",mode:"no-cors",credentials:"include"}).catch(()=>{})</script>`,
    ];
    for (const html of attacks) expect([401, 403]).toContain(await attackStatus(html, target));
    expect((await q.job(id))?.state).toBe("dead");
    await page.close();
  }, 120_000);
});
