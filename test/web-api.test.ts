/**
 * `spoolctl ui` without a browser (README "The web view", docs/contract.md
 * "The web view's API"): a real server process on a free loopback port, on
 * the suite's store. The API answers the CLI's envelopes with the status of
 * their exit code; the token, the CSRF token, the Host and Origin checks and
 * --read-only refuse what they must; job-supplied text is escaped.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";
import { startUi, type UiProcess } from "./support/web.ts";

const q = useTempQueue();
let ui: UiProcess | null = null;

afterEach(async () => {
  await ui?.stop();
  ui = null;
});

/** A response's JSON body, read loosely as tests read envelopes. */
const json = (r: Response): Promise<any> => r.json();

/** The data of an envelope minus what differs between two runs. */
function stable(env: any): unknown {
  return JSON.parse(JSON.stringify(env.data), (k, v) => (k === "meta" ? undefined : v));
}

describe("spoolctl ui: the API", () => {
  test("GET /api/VERB answers the envelope `spoolctl VERB --json` prints, and POST runs write verbs with their guards", async () => {
    const dead = await q.addJob("--max-retries", "0", "--", "sh", "-c", "exit 3");
    const queued = await q.addJob("--", "true");
    await q.run(["work", "--once"]);
    ui = await startUi(q);
    const cli = await q.json(["list", "--state", "dead"]);
    const api = await json(await ui.get("/api/list?state=dead"));
    expect(api.ok).toBe(true);
    expect(stable(api)).toEqual(stable(cli.env));
    expect(api.meta.contract_version).toBe(cli.env.meta.contract_version);
    // A positional is `id`, repeated; a switch is FLAG=true.
    const shown = await ui.get(`/api/show?id=${dead}`);
    expect(shown.status).toBe(200);
    expect((await json(shown)).data.job.id).toBe(dead);
    // Exit codes become statuses: 1 → 400, 5 → 409, 2 → 428.
    const missing = await ui.get("/api/show?id=999999");
    expect([missing.status, (await json(missing)).errors[0].code]).toEqual([400, "NOT_FOUND"]);
    const conflict = await ui.get(`/api/retry?id=${queued}`, { method: "POST" });
    expect(conflict.status).toBe(409);
    const guarded = await ui.get(`/api/delete?id=${dead}`, { method: "POST" });
    const guardedEnv = await json(guarded);
    expect([guarded.status, guardedEnv.errors[0].code]).toEqual([428, "SAFETY_BLOCK"]);
    expect((await q.job(dead))?.state).toBe("dead"); // refused: nothing lost
    const retried = await ui.get(`/api/retry?id=${dead}`, { method: "POST" });
    expect(retried.status).toBe(200);
    expect((await q.job(dead))?.state).toBe("queued");
    // retry --all with filters and --dry-run: the preview the pages show before a bulk action.
    const preview = await json(await ui.get("/api/retry?all=true&state=queued&dry-run=true", { method: "POST" }));
    expect(preview.ok).toBe(false); // queued jobs are not retried: the CLI's own refusal
  }, 60_000);

  test("wrong methods, unknown verbs and keys the API refuses", async () => {
    ui = await startUi(q);
    const cases: [string, RequestInit, number, string][] = [
      ["/api/retry?id=1", {}, 405, "INVALID_INPUT"],
      ["/api/list", { method: "POST" }, 405, "INVALID_INPUT"],
      ["/api/lsit", {}, 404, "UNKNOWN_COMMAND"],
      ["/api/work", {}, 404, "UNKNOWN_COMMAND"],
      ["/api/list?db=/etc/passwd", {}, 400, "INVALID_INPUT"],
      ["/api/events?follow=true", {}, 400, "INVALID_INPUT"],
      ["/api/list?limt=3", {}, 400, "UNKNOWN_FLAG"],
    ];
    for (const [path, init, status, code] of cases) {
      const r = await ui.get(path, init);
      const env = await json(r);
      expect([path, r.status, env.ok, env.errors[0].code]).toEqual([path, status, false, code]);
      expect(env.errors[0].remediation).toBeTruthy();
    }
    expect((await ui.get("/api/list?limt=3").then(json)).errors[0].did_you_mean).toBe("--limit");
  }, 60_000);
});

describe("spoolctl ui: safe by default", () => {
  test("no token is 401; ?token= sets an HttpOnly SameSite=Strict cookie and leaves the address bar", async () => {
    ui = await startUi(q);
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{16,}$/);
    const none = await ui.get("/api/status", { headers: { authorization: "" } });
    expect([none.status, (await json(none)).errors[0].code]).toEqual([401, "INVALID_INPUT"]);
    expect((await ui.get("/", { headers: { authorization: "" } })).status).toBe(401);
    expect((await ui.get("/", { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    const open = await ui.get(`/?token=${ui.token}`, { headers: { authorization: "" } });
    expect(open.status).toBe(303);
    expect(open.headers.get("location")).toBe("/");
    const cookie = open.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    const page = await ui.get("/", { headers: { authorization: "", cookie: cookie.split(";")[0]! } });
    const pageText = await page.text();
    expect([page.status, pageText.slice(0, 0)]).toEqual([200, ""]);
    if (page.status !== 200) console.log(pageText);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const csrf = pageText.match(/name="csrf-token" content="([^"]+)"/)![1]!;
    const id = await q.addJob("--max-retries", "0", "--", "false");
    await q.run(["work", "--once"]);
    // The cookie alone does not write: a page of another site could send it.
    const noCsrf = await ui.get(`/api/retry?id=${id}`, {
      method: "POST",
      headers: { authorization: "", cookie: cookie.split(";")[0]! },
    });
    expect([noCsrf.status, (await json(noCsrf)).errors[0].code]).toEqual([403, "SAFETY_BLOCK"]);
    expect((await q.job(id))?.state).toBe("dead");
    const withCsrf = await ui.get(`/api/retry?id=${id}`, {
      method: "POST",
      headers: { authorization: "", cookie: cookie.split(";")[0]!, "x-csrf-token": csrf },
    });
    expect(withCsrf.status).toBe(200);
    expect((await q.job(id))?.state).toBe("queued");
  }, 60_000);

  test("another Host (DNS rebinding) or another Origin is 403, even with the token", async () => {
    ui = await startUi(q);
    const id = await q.addJob("--max-retries", "0", "--", "false");
    await q.run(["work", "--once"]);
    const rebound = await ui.get("/api/status", { headers: { host: `evil.example:${ui.port}` } });
    expect([rebound.status, (await json(rebound)).errors[0].code]).toEqual([403, "SAFETY_BLOCK"]);
    const cross = await ui.get(`/api/retry?id=${id}`, { method: "POST", headers: { origin: "https://evil.example" } });
    expect(cross.status).toBe(403);
    expect((await q.job(id))?.state).toBe("dead");
    expect((await ui.get("/api/status", { headers: { host: `localhost:${ui.port}` } })).status).toBe(200);
    expect((await ui.get("/api/status", { headers: { origin: ui.base } })).status).toBe(200);
  }, 60_000);

  test("--read-only refuses every write with 403 and draws no button", async () => {
    const id = await q.addJob("--max-retries", "0", "--", "false");
    await q.run(["work", "--once"]);
    ui = await startUi(q, "--read-only");
    const r = await ui.get(`/api/retry?id=${id}`, { method: "POST" });
    expect([r.status, (await json(r)).errors[0].code]).toEqual([403, "SAFETY_BLOCK"]);
    expect((await q.job(id))?.state).toBe("dead");
    const page = await (await ui.get(`/jobs/${id}`)).text();
    expect(page).toContain("read-only");
    expect(page).not.toContain('data-verb="retry"');
    expect((await ui.get("/api/status")).status).toBe(200);
  }, 60_000);

  test("what a job supplies is escaped: a command, an output and a lane of markup render as text", async () => {
    // Lane names are refused unless plain words; a tag, a note and a key may hold anything.
    const payload = '"><img src=x onerror=alert(1)>';
    const id = await q.addJob(
      "--tag",
      `k=${payload}`,
      "--note",
      payload,
      "--key",
      "<b>k</b>",
      "--",
      "sh",
      "-c",
      "echo '<script>alert(1)</script>'",
    );
    await q.run(["work", "--once"]);
    ui = await startUi(q);
    for (const path of [`/jobs/${id}`, "/jobs", "/", "/triage"]) {
      const text = await (await ui.get(path)).text();
      expect(text).not.toContain("<img src=x");
      expect(text).not.toContain("<script>alert");
      expect(text).not.toContain("<b>k</b>");
    }
    const job = await (await ui.get(`/jobs/${id}`)).text();
    expect(job).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(job).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
  }, 60_000);

  test("a taken port is a clear error; another address than loopback is said loudly; SIGINT stops it cleanly", async () => {
    ui = await startUi(q);
    const taken = await q.json(["ui", "--port", String(ui.port)]);
    expect([taken.code, taken.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
    expect(taken.env.errors[0].message).toContain(`port ${ui.port}`);
    expect(taken.env.errors[0].remediation).toContain("--port");
    expect(await ui.stop()).toBe(0);
    ui = await startUi(q, "--host", "0.0.0.0");
    await waitFor("the warning", () => ui!.stderr().includes("WARNING: serving on 0.0.0.0"));
    // Still the token: another address changes who can reach it, not who may use it.
    expect((await ui.get("/api/status", { headers: { authorization: "" } })).status).toBe(401);
  }, 60_000);
});
