/**
 * Concurrent workers (issue 3, test a; SPEC §4 "Claim order": two live workers
 * never own the same job): 4 worker processes × `--concurrency 2` drain 300
 * jobs; each job logs its start and end under a lock file. Every job ran
 * exactly once, in one attempt, and no two runs of a job overlapped.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { addMany } from "./support/jobs.ts";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { maxParallel, parseRunLog, RUN_LOGGER, runsByJob } from "./support/run-log.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const JOBS = 300;
const WORKERS = 4;
const CONCURRENCY = 2;

test(`${WORKERS} workers × --concurrency ${CONCURRENCY} run ${JOBS} jobs, each exactly once`, async () => {
  const script = `${q.dir}/job.sh`;
  const log = `${q.dir}/runs.log`;
  const lock = `${q.dir}/runs.lock`;
  writeFileSync(script, RUN_LOGGER);
  writeFileSync(log, "");
  // Job n sleeps a little now and then, so that runs interleave across workers.
  const specs = Array.from({ length: JOBS }, (_, i) => ({
    argv: ["bash", script, String(i + 1), i % 7 === 0 ? "0.02" : "0", log, lock],
  }));
  const ids = await addMany(q, specs);
  expect(ids).toEqual(Array.from({ length: JOBS }, (_, i) => i + 1));

  const workers = Array.from({ length: WORKERS }, (_, n) =>
    startWorker(q, ["--drain", "--concurrency", String(CONCURRENCY), "--worker-id", `w${n + 1}`]),
  );
  const codes = await Promise.all(workers.map((w) => w.exited));
  for (const [n, w] of workers.entries())
    expect({ worker: n + 1, code: codes[n], stderr: codes[n] === 0 ? "" : w.stderr() }).toEqual({
      worker: n + 1,
      code: 0,
      stderr: "",
    });

  // Every job is done, in exactly one attempt, and claimed exactly once.
  const { jobs, attempts, events } = await q.snapshot();
  expect(jobs.map((j) => j.state)).toEqual(Array(JOBS).fill("done"));
  expect(attempts).toHaveLength(JOBS);
  expect(attempts.filter((a) => a.state === "succeeded")).toHaveLength(JOBS);
  expect(jobs.filter((j) => j.attempts !== 0 || j.crashes !== 0 || j.last_attempt_no !== 1)).toEqual([]);
  const claims = new Map<number, number>();
  for (const e of events) if (e.event === "claimed") claims.set(e.job_id, (claims.get(e.job_id) ?? 0) + 1);
  expect([...claims].filter(([, n]) => n !== 1)).toEqual([]);

  // The log: one start and one end per job, from the process the attempt recorded.
  const { runs, problems } = parseRunLog(readFileSync(log, "utf8"));
  expect(problems).toEqual([]);
  const by = runsByJob(runs);
  const pgids = new Map(attempts.map((a) => [a.job_id, a.pgid]));
  const wrong: string[] = [];
  for (const id of ids) {
    const rs = by.get(id) ?? [];
    if (rs.length !== 1) wrong.push(`job ${id} ran ${rs.length} times`);
    else if (rs[0]!.end === null) wrong.push(`job ${id} never logged its end`);
    else if (rs[0]!.end < rs[0]!.start) wrong.push(`job ${id} ended before it started`);
    else if (rs[0]!.pid !== pgids.get(id))
      wrong.push(`job ${id} ran as pid ${rs[0]!.pid}, attempt recorded pgid ${pgids.get(id)}`);
  }
  expect(wrong).toEqual([]);
  expect(runs.length).toBe(JOBS);

  // The fleet really ran jobs side by side, and more than one worker took part.
  const counts = new Map<string, number>();
  for (const a of attempts) counts.set(a.worker_id, (counts.get(a.worker_id) ?? 0) + 1);
  const perWorker = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([worker_id, n]) => ({ worker_id, n }));
  console.log(
    `jobs per worker: ${perWorker.map((w) => `${w.worker_id}=${w.n}`).join(" ")}; at most ${maxParallel(runs)} runs at once`,
  );
  expect(perWorker.length).toBeGreaterThanOrEqual(2);
  expect(maxParallel(runs)).toBeGreaterThan(1);
  expect(maxParallel(runs)).toBeLessThanOrEqual(WORKERS * CONCURRENCY);
}, 120000);
