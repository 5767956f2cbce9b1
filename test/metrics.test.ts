/**
 * `spoolctl metrics` end to end (README "Metrics and traces"): counters from
 * the schema's triggers after a real drain, promtool's lint on the output,
 * counters that survive a prune, and `--serve` answering a scrape.
 */
import { expect, test } from "bun:test";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

function sampleOf(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function promtool(text: string): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(["promtool", "check", "metrics"], { stdin: new Blob([text]), stdout: "pipe", stderr: "pipe" });
  const out = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text());
  return { code: await p.exited, out };
}

test("after a drain: finished jobs, retries and run times counted; promtool finds nothing", async () => {
  await addJob(q, "--", "true");
  await addJob(q, "--", "true");
  await addJob(q, "--max-retries", "1", "--", "false");
  await addJob(q, "--queue", "other", "--", "true");
  await drain(q);
  await drain(q, "--queue", "other");
  const r = await q.run(["metrics", "--json"]);
  expect(r.code).toBe(0);
  const text = r.json.data.text as string;
  expect(r.json.data.format).toBe("prometheus");
  expect(sampleOf(text, 'spoolctl_jobs_finished_total{lane="default",outcome="done"}')).toBe(2);
  expect(sampleOf(text, 'spoolctl_jobs_finished_total{lane="default",outcome="dead"}')).toBe(1);
  expect(sampleOf(text, 'spoolctl_jobs_finished_total{lane="other",outcome="done"}')).toBe(1);
  expect(sampleOf(text, 'spoolctl_job_retries_total{lane="default"}')).toBe(1);
  expect(sampleOf(text, 'spoolctl_job_run_seconds_count{lane="default",outcome="failed"}')).toBe(2);
  expect(sampleOf(text, 'spoolctl_job_run_seconds_bucket{lane="default",outcome="succeeded",le="+Inf"}')).toBe(2);
  expect(sampleOf(text, 'spoolctl_job_queued_seconds_count{lane="default"}')).toBe(4);
  expect(sampleOf(text, 'spoolctl_dead_jobs{group="process_exit exit 1"}')).toBe(1);
  const lint = await promtool(text);
  expect(lint.out).toBe("");
  expect(lint.code).toBe(0);
  const om = await q.run(["metrics", "--openmetrics"]);
  expect(om.code).toBe(0);
  expect(om.stdout.trimEnd().endsWith("# EOF")).toBe(true);
  expect(om.stdout).toContain("# TYPE spoolctl_jobs_finished counter\n");
});

test("counters keep counting after the jobs are pruned", async () => {
  await addJob(q, "--", "true");
  await drain(q);
  const pruned = await q.run(["prune", "--older-than", "0s", "--yes", "--json"]);
  expect(pruned.code).toBe(0);
  const r = await q.run(["metrics"]);
  expect(sampleOf(r.stdout, 'spoolctl_jobs{lane="default",state="done"}') ?? 0).toBe(0);
  expect(sampleOf(r.stdout, 'spoolctl_jobs_finished_total{lane="default",outcome="done"}')).toBe(1);
});

test("a bad --serve address is INVALID_INPUT with a valid envelope", async () => {
  const r = await q.run(["metrics", "--serve", "nowhere", "--json"]);
  expect(r.code).toBe(1);
  expect(r.json.ok).toBe(false);
  expect(r.json.errors[0].code).toBe("INVALID_INPUT");
});

test("--serve answers a scrape at /metrics", async () => {
  await addJob(q, "--", "true");
  await drain(q);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = q.spawn(["metrics", "--serve", `127.0.0.1:${port}`]);
  try {
    const text = await waitFor("a scrape answered", async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
      return res?.ok ? await res.text() : undefined;
    });
    expect(sampleOf(text, 'spoolctl_jobs_finished_total{lane="default",outcome="done"}')).toBe(1);
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
});

test("--serve without ADDR listens on 127.0.0.1:9464", async () => {
  await addJob(q, "--", "true");
  const child = q.spawn(["metrics", "--serve", "--json"]);
  try {
    // Either it serves there, or that port is taken here and the error names it: both show the default.
    const said = await waitFor("the address named on stderr or in the envelope", async () => {
      const res = await fetch("http://127.0.0.1:9464/metrics").catch(() => null);
      if (res?.ok && (await res.text()).includes("spoolctl_build_info")) return "served";
      if (child.exitCode !== null) return new Response(child.stdout).text();
      return undefined;
    });
    if (said !== "served") expect(said).toContain("cannot listen on 127.0.0.1:9464");
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
});
