/**
 * The web view on a large queue (docs/benchmarks.md "The web view on 1,000,000 jobs"): a real
 * `spoolctl ui` process on a queue built by bench/build-1m.ts (or
 * build-1m-pg.ts), every page and the API calls its pages make, each timed
 * from the request to the last byte over loopback (an upper bound of the
 * server's time), median of 7 after a warm-up. Nothing changes: the one
 * write call is a dry run, rolled back.
 *
 *   bun bench/ui.ts PATH_OR_URL [--json] [--only /triage,/metrics]   # --only: just these paths
 */
import { BUN, CLI } from "./lib.ts";

const where = process.argv[2];
if (!where) throw new Error("usage: bun bench/ui.ts PATH_OR_URL [--json]");
const asJson = process.argv.includes("--json");
const onlyAt = process.argv.indexOf("--only");
const only = onlyAt > 0 ? new Set((process.argv[onlyAt + 1] ?? "").split(",")) : null;

const proc = Bun.spawn([BUN, CLI, "ui", "--db", where, "--port", "0", "--json"], {
  stdout: "pipe",
  stderr: "inherit",
});
const reader = proc.stdout.getReader();
let first = "";
while (!first.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`spoolctl ui exited before printing its URL: ${first}`);
  first += new TextDecoder().decode(value);
}
reader.releaseLock();
const url = new URL(JSON.parse(first.slice(0, first.indexOf("\n"))).data.url);
const token = url.searchParams.get("token")!;
const base = `${url.protocol}//${url.host}`;
const headers = { authorization: `Bearer ${token}` };

/** GETs `path`; its status and body. */
async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(base + path, { headers });
  return { status: res.status, body: await res.text() };
}

// Ids to open: the newest job, a dead one, and the newest batch (when there is one).
const newest = JSON.parse((await get("/api/list?limit=1")).body).data.jobs[0]?.id;
const dead = JSON.parse((await get("/api/list?state=dead&limit=1")).body).data.jobs[0]?.id;
const batch = JSON.parse((await get("/api/batch-list?limit=1")).body).data?.batches?.[0]?.name;

const every = [
  "/",
  "/jobs",
  "/jobs?state=dead",
  "/jobs?queue=builds&state=queued",
  `/jobs?cursor=${Math.max(1, Math.floor((newest ?? 2) / 2))}`,
  "/jobs?search=curl",
  "/jobs?search=no-such-text-anywhere",
  `/jobs/${newest}`,
  `/jobs/${dead}`,
  "/triage",
  "/batches",
  ...(batch ? [`/batches/${encodeURIComponent(batch)}`] : []),
  "/lanes",
  "/schedules",
  "/hooks",
  "/workers",
  "/metrics",
  "/api/status",
  "/api/list?limit=200",
  "/api/retry?all=true&state=dead&dry-run=true",
];
const paths = only ? every.filter((p) => only.has(p)) : every;

const rows: { path: string; status: number; median_ms: number; max_ms: number; kb: number }[] = [];
for (const path of paths) {
  const times: number[] = [];
  let status = 0;
  let bytes = 0;
  for (let i = 0; i < 8; i++) {
    const t0 = performance.now();
    // A write verb's dry run is a POST, as the pages send it.
    const res = path.startsWith("/api/retry")
      ? await fetch(base + path, { method: "POST", headers })
      : await fetch(base + path, { headers });
    const body = await res.arrayBuffer();
    if (i > 0) times.push(performance.now() - t0);
    status = res.status;
    bytes = body.byteLength;
  }
  times.sort((a, b) => a - b);
  rows.push({
    path,
    status,
    median_ms: Math.round(times[3]! * 10) / 10,
    max_ms: Math.round(times.at(-1)! * 10) / 10,
    kb: Math.round(bytes / 102.4) / 10,
  });
}
proc.kill("SIGINT");
await proc.exited;

if (asJson) console.log(JSON.stringify({ where: where.includes("://") ? "postgres" : "sqlite", rows }));
else {
  console.log(`| page or call | status | median ms | max ms | KB |\n|---|---|---|---|---|`);
  for (const r of rows) console.log(`| \`${r.path}\` | ${r.status} | ${r.median_ms} | ${r.max_ms} | ${r.kb} |`);
}
