/**
 * The web view's triage page on the kept dead counts (docs/architecture.md
 * "Kept dead counts", "The web view"): a real `spoolctl ui` on the suite's
 * store. Groups are counted from the kept rows and named by their key, never
 * by their jobs' ids; acting on a key takes exactly that group; the metrics'
 * dead-jobs gauge follows.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";
import { startUi, type UiProcess } from "./support/web.ts";

const q = useTempQueue();
let ui: UiProcess | null = null;

afterEach(async () => {
  await ui?.stop();
  ui = null;
});

/** The key of the group whose heading says `text`, from the page's `data-group`. */
function groupKey(page: string, text: string): string | undefined {
  for (const m of page.matchAll(/<article class="group"[^>]*data-group="([^"]*)"[^>]*>\s*<h2[^>]*>([\s\S]*?)<\/h2>/g))
    if (m[2]!.includes(text))
      return m[1]!
        .replaceAll("&#39;", "'")
        .replaceAll("&quot;", '"')
        .replaceAll("&lt;", "<")
        .replaceAll("&gt;", ">")
        .replaceAll("&amp;", "&");
  return undefined;
}

describe("spoolctl ui: triage by kept failure group", () => {
  test("groups are counted and named by key, not by ids; retrying a key requeues exactly that group", async () => {
    const boom: number[] = [];
    for (let i = 0; i < 6; i++)
      boom.push(await q.addJob("--max-retries", "0", "--", "sh", "-c", `echo "boom at step ${i}" >&2; exit 2`));
    const other: number[] = [];
    for (let i = 0; i < 2; i++)
      other.push(await q.addJob("--queue", "net", "--max-retries", "0", "--", "sh", "-c", "echo other >&2; exit 5"));
    const drained = await q.run(["work", "--drain", "--queue", "default", "--queue", "net"]);
    expect(drained.code).toBe(0);
    ui = await startUi(q);
    const page = await (await ui.get("/triage")).text();
    expect(page).toContain("8 jobs in 2 groups");
    // The buttons select by group key; no job id travels in them.
    expect(
      [...page.matchAll(/data-params="([^"]*)"/g)].map((m) => m[1]!).filter((p) => /(^|&amp;|&)id=/.test(p)),
    ).toEqual([]);
    const key = groupKey(page, "boom at step");
    expect(key).toBe("process_exit|2||1|boom at step <n>");
    expect(page).toContain(`failure-group=${encodeURIComponent(key!)}`);
    expect(page).toMatch(/<span class="count">6<\/span> process_exit · exit 2 · boom at step &lt;n&gt;/);
    const sel = `all=true&state=dead&failure-group=${encodeURIComponent(key!)}`;
    const preview = await (await ui.get(`/api/retry?${sel}&dry-run=true`, { method: "POST" })).json();
    expect(preview.data.count).toBe(6);
    const retried = await ui.get(`/api/retry?${sel}`, { method: "POST" });
    expect(retried.status).toBe(200);
    for (const id of boom) expect((await q.job(id))?.state).toBe("queued");
    for (const id of other) expect((await q.job(id))?.state).toBe("dead");
    const after = await (await ui.get("/triage")).text();
    expect(after).toContain("2 jobs in 1 groups");
    expect(groupKey(after, "boom")).toBeUndefined();
    const metrics = await (await ui.get("/metrics")).text();
    expect(metrics).toContain('spoolctl_dead_jobs{group="process_exit exit 5"} 2');
    expect(metrics).not.toContain('group="process_exit exit 2"');
  }, 120_000);

  test("the CLI selects by the same key: list --failure-group, delete --all --failure-group", async () => {
    const gone = await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo gone >&2; exit 4");
    const kept = await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo kept >&2; exit 4");
    expect((await q.run(["work", "--drain"])).code).toBe(0);
    const key = "process_exit|4||1|gone";
    const listed = await q.json(["list", "--failure-group", key]);
    expect(listed.env.data.jobs.map((j: { id: number }) => j.id)).toEqual([gone]);
    const deleted = await q.json(["delete", "--all", "--failure-group", key, "--yes"]);
    expect(deleted.env.ok).toBe(true);
    expect(await q.job(gone)).toBeNull();
    expect((await q.job(kept))?.state).toBe("dead");
    const none = await q.json(["list", "--failure-group", key]);
    expect(none.env.data.jobs).toEqual([]);
  }, 120_000);
});
