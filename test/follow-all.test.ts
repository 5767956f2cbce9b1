/**
 * `output --follow --all` (issue 20 item 4; docs/architecture.md "Batches"):
 * every line of every attempt of a batch, each exactly once, whole, with its
 * prefix, jobs that start after the follow began included; real workers,
 * SPOOLCTL_TEST_DB runs it on PostgreSQL.
 */
import { beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { addJob } from "./support/jobs.ts";
import { FAST_KNOBS, ON_POSTGRES, type TempQueue, useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(180_000);

let procs: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const p of procs) p.kill("SIGTERM");
    await Promise.all(procs.map((p) => p.exited));
  },
});
beforeEach(() => {
  procs = [];
});

const JOBS = 20;
const LINES = 50;

/**
 * Job `k`: LINES stdout and LINES stderr lines, long enough to span reads, and
 * one line written in two halves with a pause between, which a follower sees
 * unfinished at some look.
 */
function script(k: number): string {
  const pad = "x".repeat(200);
  return `i=0; while [ $i -lt ${LINES} ]; do echo "out-${k}-$i-${pad}"; echo "err-${k}-$i" >&2; i=$((i+1)); done; printf 'split-${k}-'; sleep 0.3; echo 'joined'`;
}

/** The lines job `k` writes, as (stream, text). */
function expected(k: number): string[] {
  const pad = "x".repeat(200);
  const out: string[] = [];
  for (let i = 0; i < LINES; i++) out.push(`stdout|out-${k}-${i}-${pad}`, `stderr|err-${k}-${i}`);
  out.push(`stdout|split-${k}-joined`);
  return out;
}

test("follow-all prints every line of 20 concurrent jobs exactly once with its prefix, late jobs included", async () => {
  const ids = new Map<number, number>();
  for (let k = 0; k < JOBS / 2; k++) ids.set(await addJob(q, "--batch", "fa", "-c", script(k)), k);
  const text = q.spawn(["output", "--follow", "--all", "--batch", "fa"]);
  const json = q.spawn(["output", "--follow", "--all", "--batch", "fa", "--json"]);
  procs.push(text, json);
  const worker = q.spawn(["work", "--concurrency", String(JOBS), "--poll-interval", "0.05"], { env: FAST_KNOBS });
  procs.push(worker);
  // The second half is added while the followers run (and the first half is running); the last add seals.
  for (let k = JOBS / 2; k < JOBS; k++)
    ids.set(await addJob(q, "--batch", "fa", ...(k === JOBS - 1 ? ["--seal"] : []), "-c", script(k)), k);
  const [textOut, textCode, jsonOut, jsonCode] = await Promise.all([
    new Response(text.stdout).text(),
    text.exited,
    new Response(json.stdout).text(),
    json.exited,
  ]);
  expect([textCode, jsonCode]).toEqual([0, 0]);
  const want = [...ids.entries()].flatMap(([id, k]) => expected(k).map((l) => `${id}|${l}`)).sort();
  // Text: every line `[ID] text` or `[ID stderr] text`, nothing else.
  const textLines = textOut.split("\n").slice(0, -1);
  const parsed = textLines.map((line) => {
    const m = /^\[(\d+)( stderr)?\] (.*)$/.exec(line);
    if (!m) throw new Error(`not a prefixed line: ${JSON.stringify(line.slice(0, 120))}`);
    return `${m[1]}|${m[2] ? "stderr" : "stdout"}|${m[3]}`;
  });
  expect(parsed.length).toBe(want.length);
  expect(parsed.sort()).toEqual(want);
  // JSON: one object per line with job, attempt, stream, text.
  const objects = jsonOut
    .split("\n")
    .slice(0, -1)
    .map((l) => JSON.parse(l) as { job: number; attempt: number; stream: string; text: string });
  expect(objects.every((o) => o.attempt === 1 && Object.keys(o).sort().join() === "attempt,job,stream,text")).toBe(
    true,
  );
  expect(objects.map((o) => `${o.job}|${o.stream}|${o.text}`).sort()).toEqual(want);
  // Per job and stream, the lines come in the order written.
  for (const [id, k] of ids) {
    const outs = objects.filter((o) => o.job === id && o.stream === "stdout").map((o) => o.text);
    expect(outs).toEqual(
      expected(k)
        .filter((l) => l.startsWith("stdout|"))
        .map((l) => l.slice(7)),
    );
  }
});

test.skipIf(!ON_POSTGRES)(
  "PostgreSQL: follow-all reads shipped output where the files are not (another host)",
  async () => {
    const ids = new Map<number, number>();
    for (let k = 0; k < 3; k++)
      ids.set(await addJob(q, "--batch", "ship", ...(k === 2 ? ["--seal"] : []), "-c", script(k)), k);
    expect((await q.run(["work", "--drain"], { env: FAST_KNOBS })).code).toBe(0);
    // The files of this host are gone: only the copies the worker shipped remain.
    rmSync(join(q.spool, "output"), { recursive: true, force: true });
    const r = await q.run(["output", "--follow", "--all", "--batch", "ship", "--json"]);
    expect(r.code).toBe(0);
    const got = r.stdout
      .split("\n")
      .slice(0, -1)
      .map((l) => JSON.parse(l) as { job: number; stream: string; text: string })
      .map((o) => `${o.job}|${o.stream}|${o.text}`)
      .sort();
    expect(got).toEqual([...ids.entries()].flatMap(([id, k]) => expected(k).map((l) => `${id}|${l}`)).sort());
  },
);

test("follow-all: bad combinations are clear errors", async () => {
  const r1 = await q.json(["output", "--all", "--batch", "x"]);
  expect([r1.code, r1.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  const r2 = await q.json(["output", "--follow", "--all"]);
  expect(r2.env.errors[0].message).toContain("--batch, --queue or --tag");
  const r3 = await q.json(["output", "--batch", "x"]);
  expect(r3.env.errors[0].code).toBe("INVALID_INPUT");
  const r4 = await q.json(["output"]);
  expect(r4.env.errors[0].code).toBe("MISSING_REQUIRED");
});
