/**
 * The real thing: a Prometheus server (Debian's /usr/bin/prometheus) on a free
 * loopback port scrapes `spoolctl metrics --serve`, and its HTTP API answers
 * spoolctl_jobs_finished_total after a drain with the queue's numbers
 * (README "Metrics and traces").
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

/** A loopback port nobody listens on now. */
function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  s.stop(true);
  return port;
}

test("Prometheus scrapes metrics --serve and reports the finished jobs by lane and outcome", async () => {
  await addJob(q, "--", "true");
  await addJob(q, "--", "true");
  await addJob(q, "--max-retries", "0", "--", "false");
  await drain(q);
  const exporter = freePort();
  const server = q.spawn(["metrics", "--serve", `127.0.0.1:${exporter}`]);
  const dir = join(q.dir, "prometheus");
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(
    join(dir, "prometheus.yml"),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }\nscrape_configs:\n  - job_name: spoolctl\n    static_configs: [{ targets: ["127.0.0.1:${exporter}"] }]\n`,
  );
  const api = freePort();
  const prom = Bun.spawn(
    [
      "/usr/bin/prometheus",
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${api}`,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  try {
    const series = await waitFor(
      "Prometheus to hold spoolctl_jobs_finished_total",
      async () => {
        const url = `http://127.0.0.1:${api}/api/v1/query?query=${encodeURIComponent("spoolctl_jobs_finished_total")}`;
        const res = await fetch(url).catch(() => null);
        if (!res?.ok) return undefined;
        const body = (await res.json()) as {
          data: { result: { metric: Record<string, string>; value: [number, string] }[] };
        };
        return body.data.result.length >= 3 ? body.data.result : undefined;
      },
      90_000,
      250,
    );
    const got = Object.fromEntries(series.map((s) => [`${s.metric.lane}/${s.metric.outcome}`, Number(s.value[1])]));
    expect(got).toEqual({ "default/done": 2, "default/dead": 1, "default/canceled": 0 });
    expect(series[0]!.metric.job).toBe("spoolctl");
  } finally {
    prom.kill("SIGTERM");
    server.kill("SIGTERM");
    await Promise.all([prom.exited, server.exited]);
  }
}, 120_000);
