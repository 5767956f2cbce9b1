/**
 * `work --drain` with dependents whose needs cannot run in the drain
 * (docs/architecture.md "Drain"): the rule for delayed jobs applies to their
 * dependents too. A need delayed, in a paused lane or in a lane no live worker
 * serves holds no drain: the drain exits 0 and says on stderr which job waits
 * on which need and why. A need waiting out a retry backoff in a lane a live
 * worker serves keeps the drain open, and the drain says what it waits on.
 * `wait` names the need's lane in its NO_WORKER warning.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

/** Collects a spawned CLI's stderr as it comes; `ended` resolves once the stream is closed (all of it read). */
function collect(stream: ReadableStream<Uint8Array>): { text: () => string; ended: Promise<void> } {
  let text = "";
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
    text += decoder.decode();
  })();
  return { text: () => text, ended };
}

/** A drain of lane default, bounded: a hang fails the test instead of stalling it. */
async function drain(): Promise<{ code: number; stderr: string }> {
  const p = q.spawn(["work", "--drain", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  const err = collect(p.stderr);
  const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
  const code = await p.exited;
  clearTimeout(timer);
  await err.ended; // the last lines are in the pipe when the process exits, not yet read
  if (p.signalCode === "SIGKILL") throw new Error(`drain hung; stderr:\n${err.text()}`);
  return { code, stderr: err.text() };
}

test("a dependent of a delayed need holds no drain: it exits 0 and says why", async () => {
  const need = await q.addJob("--key", "A", "--after", "1h", "--", "true");
  const dep = await q.addJob("--needs", "A", "--", "true");
  const r = await drain();
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`left queued: job ${dep} waits on job ${need}: job ${need} is delayed until`);
  expect((await q.job(dep))!.state).toBe("queued");
  expect((await q.job(need))!.state).toBe("queued");
});

test("work --drain --json lists the dependents it left queued, in the words of the stderr line", async () => {
  const need = await q.addJob("--key", "A", "--after", "1h", "--", "true");
  const other = await q.addJob("--queue", "other", "--key", "O", "--", "true");
  const dep = await q.addJob("--needs", "A", "--", "true");
  const dep2 = await q.addJob("--needs", "O", "--", "true");
  const r = await q.run(["work", "--drain", "--json", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  expect(r.code).toBe(0);
  const left = r.json.data.left_queued;
  expect(left.map((h: { job_id: number }) => h.job_id)).toEqual([dep, dep2]);
  expect(left[0]).toMatchObject({
    job_id: dep,
    queue: "default",
    need_id: need,
    need_lane: "default",
    serve_lane: null,
  });
  expect(left[0].text).toStartWith(`job ${dep} waits on job ${need}: job ${need} is delayed until`);
  expect(left[1]).toMatchObject({ job_id: dep2, need_id: other, need_lane: "other", serve_lane: "other" });
  expect(left[1].text).toBe(
    `job ${dep2} waits on job ${other}: job ${other} is in lane other, which no live worker serves`,
  );
  // A drain that left nothing says so with [].
  await q.run(["cancel", String(dep), String(dep2)]);
  const empty = await q.run(["work", "--drain", "--json", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  expect(empty.json.data.left_queued).toEqual([]);
});

test("a dependent of a need in a paused lane holds no drain", async () => {
  const need = await q.addJob("--queue", "p", "--key", "P", "--", "true");
  const pause = await q.run(["pause", "p"]);
  expect(pause.code).toBe(0);
  const dep = await q.addJob("--needs", "P", "--", "true");
  const r = await drain();
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`left queued: job ${dep} waits on job ${need}: job ${need} is in paused lane p`);
  expect((await q.job(dep))!.state).toBe("queued");
});

test("a dependent of a need in a lane no worker serves holds no drain, and the line says how to serve it", async () => {
  const need = await q.addJob("--queue", "other", "--key", "O", "--", "true");
  const dep = await q.addJob("--needs", "O", "--", "true");
  const r = await drain();
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(
    `left queued: job ${dep} waits on job ${need}: job ${need} is in lane other, which no live worker serves (serve it: spoolctl work --db ${q.dbWord} --queue other)`,
  );
  expect((await q.job(dep))!.state).toBe("queued");
});

test("a chain two levels up is judged: the first need that cannot run is named", async () => {
  const root = await q.addJob("--key", "R", "--after", "1h", "--", "true");
  const mid = await q.addJob("--key", "M", "--needs", "R", "--", "true");
  const leaf = await q.addJob("--needs", "M", "--", "true");
  const r = await drain();
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(
    `job ${leaf} waits on job ${mid}: job ${mid} waits on job ${root}; job ${root} is delayed`,
  );
});

test("a need waiting out a backoff in a lane a live worker serves keeps the drain open, and it says so", async () => {
  const marker = join(q.dir, "marker");
  const need = await q.addJob(
    "--queue",
    "other",
    "--key",
    "B",
    "--",
    "sh",
    "-c",
    `if [ -e '${marker}' ]; then exit 0; else touch '${marker}'; exit 1; fi`,
  );
  const dep = await q.addJob("--needs", "B", "--", "true");
  // Long enough that a drain started on a loaded machine still finds the need waiting it out.
  await q.setConfig("backoff-base", "40");
  await q.setConfig("backoff-cap", "40");
  const other = q.spawn(["work", "--queue", "other", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  try {
    await waitFor(
      "the need's first attempt to fail",
      async () => {
        const j = (await q.job(need))!;
        return j.state === "queued" && j.last_attempt_no === 1;
      },
      60_000,
    );
    const d = q.spawn(["work", "--drain", "--poll-interval", "0.05"], { env: FAST_KNOBS });
    const err = collect(d.stderr);
    let exited = false;
    d.exited.then(() => {
      exited = true;
    });
    const line = `drain of lane default waits: job ${dep} waits on job ${need}: job ${need} (lane other) waits out a retry backoff (due in`;
    await waitFor("the drain to say what it waits on", () => err.text().includes(line) || exited, 60_000);
    expect(err.text()).toContain(line);
    // Still open while the backoff lasts (or it ran the dependent after the retry, never exiting before).
    if (exited) expect((await q.job(dep))!.state).toBe("done");
    expect(await d.exited).toBe(0);
    expect((await q.job(need))!.state).toBe("done");
    expect((await q.job(dep))!.state).toBe("done");
    expect(err.text()).not.toContain("left queued");
  } finally {
    other.kill("SIGTERM");
    await other.exited;
  }
}, 180_000);

test("wait names the need's lane when no live worker serves it", async () => {
  const need = await q.addJob("--queue", "other", "--key", "O", "--", "true");
  const dep = await q.addJob("--needs", "O", "--", "true");
  const w = q.spawn(["work", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  try {
    await waitFor("a worker of lane default", async () => (await q.workers()).some((x) => x.stopped_at === null));
    const waiter = q.spawn(["wait", String(dep), "--timeout", "60", "--poll-interval", "0.05"]);
    const err = collect(waiter.stderr);
    const warning = `NO_WORKER: no live worker serves lane other: job ${need} (lane other, needed by ${dep}) cannot finish`;
    await waitFor("wait's NO_WORKER warning naming lane other", () => err.text().includes(warning), 60_000);
    expect(err.text()).toContain(`spoolctl work --db ${q.dbWord} --queue other`);
    waiter.kill("SIGTERM");
    await waiter.exited;
  } finally {
    w.kill("SIGTERM");
    await w.exited;
  }
}, 120_000);
