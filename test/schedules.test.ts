/**
 * Recurring jobs end to end (docs/architecture.md "Recurring jobs"): real `spoolctl work`
 * processes fire an `--every 1s` schedule exactly once per slot while they are SIGKILLed and
 * restarted; slots missed while no worker ran follow `--catch-up`; `--overlap skip` records
 * the slots it passes over. Runs on the driver SPOOLCTL_TEST_DB selects (SQLite by default).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import type { Job } from "../src/model/job.ts";
import { openQueue } from "../src/store/index.ts";
import { slotOfKey } from "../src/store/recurring.ts";
import type { Store } from "../src/store/store.ts";
import { type BgProc, killJobGroups, killSpawned, startWorker } from "./support/processes.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

let store: Store | null = null;
const q = useTempQueue({
  teardown: async () => {
    await killSpawned();
    await killJobGroups(q);
    await store?.close();
    store = null;
  },
});

async function open(): Promise<Store> {
  store ??= await openQueue(q.location(), { create: false });
  return store;
}

/** The jobs schedule `name` made, by slot (epoch seconds), oldest first. */
async function scheduledJobs(name: string): Promise<{ slot: number; job: Job }[]> {
  const s = await open();
  const jobs = await s.read(async (tx) => tx.listJobs({ limit: 10_000 }));
  return jobs
    .flatMap((job) => {
      const of = slotOfKey(job.idempotency_key);
      return of && of.schedule === name && !of.manual ? [{ slot: Date.parse(of.slot) / 1000, job }] : [];
    })
    .sort((a, b) => a.slot - b.slot);
}

async function slotRows(name: string) {
  const s = await open();
  return await s.read(async (tx) => tx.recurring.slotsOf(name, 1000));
}

/** `spoolctl ARGS` with `--json` before the `--`; the envelope, after asserting exit 0. */
async function cli(...args: string[]): Promise<any> {
  const i = args.indexOf("--");
  const r = await q.run(i === -1 ? [...args, "--json"] : [...args.slice(0, i), "--json", ...args.slice(i)]);
  expect([args.join(" "), r.code, r.stderr]).toEqual([args.join(" "), 0, ""]);
  return JSON.parse(r.stdout);
}

function worker(id: string, ...args: string[]): BgProc {
  return startWorker(q, ["--worker-id", id, ...args], { env: FAST_KNOBS });
}

test("3 workers SIGKILLed and restarted over an --every 1s schedule for 15 s: one job per slot, none missing", async () => {
  await cli("schedule", "add", "s", "--every", "1s", "--catch-up", "all:100", "--overlap", "allow", "--", "true");
  const workers = [worker("w0"), worker("w1"), worker("w2")];
  const started = performance.now();
  let round = 0;
  // The schedule's life: every 2.5 s one worker is SIGKILLed and another takes its place.
  while (performance.now() - started < 15_000) {
    await Bun.sleep(2500); // the chaos' own rhythm, not a wait for a state
    const i = round % 3;
    workers[i]!.proc.kill("SIGKILL");
    await workers[i]!.exited;
    workers[i] = worker(`w${i}-${++round}`);
  }
  await cli("schedule", "pause", "s");
  const jobs = await scheduledJobs("s");
  const slots = jobs.map((j) => j.slot);
  expect(jobs.length).toBeGreaterThanOrEqual(10);
  // No key twice, and every slot between the first and the last has its job.
  const keys = jobs.map((j) => j.job.idempotency_key);
  expect(new Set(keys).size).toBe(keys.length);
  const gaps = slots.slice(1).flatMap((t, i) => (t - slots[i]! === 1 ? [] : [[slots[i], t]]));
  expect(gaps).toEqual([]);
  expect((await slotRows("s")).filter((r) => r.outcome !== "fired")).toEqual([]);
  // The workers ran them: each fired job is done (or still queued/running at the pause).
  const done = jobs.filter((j) => j.job.state === "done").length;
  expect(done).toBeGreaterThanOrEqual(jobs.length - 6);
});

/** Waits until schedule `name` has had at least `n` slots come with no worker, then starts one. */
async function afterOutage(name: string, n: number): Promise<{ first: number }> {
  const list = await cli("schedule", "list", name);
  const first = list.data.schedules[0].next_slot as number;
  const s = await open();
  await waitFor(`${n} slots of ${name} to pass`, () => s.now() >= first + n - 1 + 0.2, 30_000);
  worker("late");
  return { first };
}

test("no worker for 5 slots, then a worker: --catch-up last fires the newest once, the rest are missed", async () => {
  await cli("schedule", "add", "late", "--every", "1s", "--", "true");
  const { first } = await afterOutage("late", 5);
  const missed = await waitFor(
    "the missed row",
    async () => (await slotRows("late")).find((r) => r.outcome === "missed"),
    30_000,
  );
  const detail = JSON.parse(missed.detail!);
  expect(missed.slot).toBe(first);
  expect(detail.count).toBeGreaterThanOrEqual(4); // 5 or more slots came, the newest fired
  const jobs = await scheduledJobs("late");
  // The first pass fired exactly one slot: the one after the last missed.
  expect(jobs[0]!.slot).toBe(detail.last + 1);
  expect(jobs.filter((j) => j.slot <= detail.last + 1)).toHaveLength(1);
});

test("no worker for 5 slots, then a worker: --catch-up all:3 fires the newest 3", async () => {
  await cli("schedule", "add", "late", "--every", "1s", "--catch-up", "all:3", "--overlap", "allow", "--", "true");
  await afterOutage("late", 5);
  const missed = await waitFor(
    "the missed row",
    async () => (await slotRows("late")).find((r) => r.outcome === "missed"),
    30_000,
  );
  const detail = JSON.parse(missed.detail!);
  expect(detail.count).toBeGreaterThanOrEqual(2); // 5 or more came, 3 fired
  const jobs = await waitFor("3 jobs", async () => {
    const j = await scheduledJobs("late");
    return j.length >= 3 ? j : null;
  });
  expect(jobs.slice(0, 3).map((j) => j.slot)).toEqual([detail.last + 1, detail.last + 2, detail.last + 3]);
});

test("--overlap skip with a job longer than the interval: slots are skipped and recorded, runs never overlap", async () => {
  await cli("schedule", "add", "slow", "--every", "1s", "--", "sleep", "2.5");
  worker("w", "--concurrency", "3");
  await waitFor(
    "two runs done and two skipped slots",
    async () => {
      const jobs = await scheduledJobs("slow");
      const skipped = (await slotRows("slow")).filter((r) => r.outcome === "skipped");
      return jobs.filter((j) => j.job.state === "done").length >= 2 && skipped.length >= 2;
    },
    60_000,
  );
  await cli("schedule", "pause", "slow");
  const rows = await slotRows("slow");
  const skipped = rows.filter((r) => r.outcome === "skipped");
  for (const r of skipped)
    expect(JSON.parse(r.detail!)).toMatchObject({ overlap: "skip", active_job: expect.any(Number) });
  // Each run starts after the previous one ended.
  const s = await open();
  const spans = [];
  for (const { job } of await scheduledJobs("slow")) {
    const [a] = await s.read(async (tx) => tx.attemptsOf(job.id));
    if (a) spans.push([a.started_at, a.finished_at ?? Number.POSITIVE_INFINITY]);
  }
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]!).toBeGreaterThanOrEqual(spans[i - 1]![1]!);
  // `schedule list` says what became of the slots.
  const listed = await q.run(["schedule", "list", "slow"]);
  expect(listed.stdout).toMatch(/^SLOT +OUTCOME +JOB +DETAIL$/m);
  // In words, not the stored JSON, with slot times as ISO-8601 without milliseconds.
  expect(listed.stdout).toMatch(/^\S+Z +skipped +- +job \d+ was still queued or running \(overlap skip\)$/m);
  expect(listed.stdout).not.toContain("{");
});

test("status shows schedules and warns with no live worker; list, show and tick say which schedule made a job", async () => {
  await cli("schedule", "add", "nightly", "--cron", "0 3 * * *", "--tz", "Europe/Berlin", "--", "true");
  await cli("schedule", "add", "often", "--every", "1s", "--", "true");
  const status = await q.run(["status", "--json"]);
  const env = JSON.parse(status.stdout);
  expect(env.data.schedules.map((s: any) => s.name)).toEqual(["nightly", "often"]);
  expect(env.warnings.map((w: any) => w.code)).toEqual(["SCHEDULES_UNFIRED"]);
  // A host without a worker fires due slots with one pass.
  const ticked = await waitFor("a slot of often to be due and fired", async () => {
    const t = await cli("schedule", "tick");
    return t.data.outcomes.find((o: any) => o.outcome === "fired");
  });
  const list = await q.run(["list"]);
  expect(list.stdout).toContain("[sched often] true");
  const show = await q.run(["show", String(ticked.job_id)]);
  expect(show.stdout).toMatch(/made by\s+schedule often slot \d{4}-\d\d-\d\dT[\d:]+Z/);
  // With a live worker the warning goes; a paused schedule never warns.
  worker("w");
  await waitFor(
    "the worker to count as live",
    async () => JSON.parse((await q.run(["status", "--json"])).stdout).data.live_workers === 1,
  );
  expect(JSON.parse((await q.run(["status", "--json"])).stdout).warnings).toEqual([]);
  const text = await q.run(["status"]);
  expect(text.stdout).toContain("schedules: 2");
  expect(text.stdout).toContain("nightly  next ");
});

test("schedule add refuses a bad rule, zone or policy with the reason, and a taken name", async () => {
  const refuse = async (args: string[], pattern: RegExp, code = "INVALID_INPUT") => {
    const r = await q.run(["schedule", "add", ...args, "--json", "--", "true"]);
    const error = JSON.parse(r.stdout).errors[0];
    expect([args.join(" "), r.code, error.code]).toEqual([args.join(" "), error.exit_code, code]);
    expect(error.message).toMatch(pattern);
    expect(r.stderr).not.toContain("    at ");
  };
  await refuse(["x", "--cron", "0 25 * * *"], /hour: 25/);
  await refuse(["x", "--cron", "0 3 * * *", "--tz", "Mars/Olympus"], /Mars\/Olympus/);
  await refuse(["x", "--every", "1s", "--cron", "0 3 * * *"], /either --cron EXPR or --every/);
  await refuse(["x"], /either --cron EXPR or --every/);
  await refuse(["x", "--every", "1s", "--catch-up", "some"], /none, last, or all:N/);
  await refuse(["x", "--every", "1s", "--key", "k"], /--key/, "UNKNOWN_FLAG"); // each slot's job has its own key
  // A batch or needs would be one add's, not every slot's: refused, not silently ignored.
  await refuse(["x", "--every", "1s", "--batch", "b"], /--batch/, "UNKNOWN_FLAG");
  await refuse(["x", "--every", "1s", "--needs", "1"], /--needs/, "UNKNOWN_FLAG");
  await refuse(["bad:name", "--every", "1s"], /not a schedule name/);
  await cli("schedule", "add", "x", "--every", "1h", "--", "true");
  const taken = await q.run(["schedule", "add", "x", "--every", "1h", "--json", "--", "true"]);
  expect(JSON.parse(taken.stdout).errors[0].code).toBe("CONFLICT");
});

test("--overlap queue with a job longer than the interval: the slot waits for the job and fires late, never beside it", async () => {
  await cli("schedule", "add", "q", "--every", "1s", "--overlap", "queue", "--", "sleep", "2.5");
  worker("w", "--concurrency", "3");
  await waitFor(
    "three runs done",
    async () => (await scheduledJobs("q")).filter((j) => j.job.state === "done").length >= 3,
    60_000,
  );
  await cli("schedule", "pause", "q");
  const rows = await slotRows("q");
  expect(rows.filter((r) => r.outcome === "skipped")).toEqual([]);
  const s = await open();
  const spans = [];
  for (const { job } of await scheduledJobs("q")) {
    const [a] = await s.read(async (tx) => tx.attemptsOf(job.id));
    if (a) spans.push([job.created_at, a.started_at, a.finished_at ?? Number.POSITIVE_INFINITY] as const);
  }
  // Each job is added only once the previous one ended (so the runs never overlap).
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![2]);
});
