/**
 * Acting on a selection (docs/architecture.md "Acting on a selection"):
 * `--search` over command line, key and last error, and `cancel --all`,
 * `delete --all` with the filters `retry --all` takes, each previewed by
 * `--dry-run` with exactly what the real run then does, end to end through
 * the real CLI on the suite's store.
 */
import { expect, test } from "bun:test";
import { skipJobIdsTo } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** `add --json …`; the job's id. */
async function add(...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  expect(r.code).toBe(0);
  return r.json.data.job_id as number;
}

/** Ids `list --json ARGS` shows, newest first. */
async function listed(...args: string[]): Promise<number[]> {
  const r = await q.json(["list", ...args]);
  expect(r.code).toBe(0);
  return r.env.data.jobs.map((j: { id: number }) => j.id);
}

test("--search finds text in the command line, the key or the last error, ASCII case ignored, literally", async () => {
  // The message is only in the job's stderr, hence in its last error, not in its command.
  const failing = await add(
    "--max-retries",
    "0",
    "--env",
    "MSG=Gateway Timeout",
    "--",
    "sh",
    "-c",
    'echo "$MSG" >&2; exit 3',
  );
  const keyed = await add("--key", "deploy-7", "--", "true");
  const literal = await add("--", "echo", "100%_done");
  await add("--", "echo", "100 percent");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect((await q.attempt(failing))?.stderr_last_line).toContain("Gateway Timeout");
  expect(await listed("--search", "gateway TIMEOUT")).toEqual([failing]);
  expect(await listed("--search", "DEPLOY-")).toEqual([keyed]);
  // % and _ are text, not patterns.
  expect(await listed("--search", "%_")).toEqual([literal]);
  expect(await listed("--search", "nothing like this")).toEqual([]);
  // It narrows the other filters, and retry --all selects by it too.
  expect(await listed("--search", "timeout", "--state", "done")).toEqual([]);
  const dry = await q.json(["retry", "--all", "--search", "gateway", "--dry-run"]);
  expect(dry.env.data.jobs.map((j: { job_id: number }) => j.job_id)).toEqual([failing]);
  const empty = await q.json(["list", "--search", ""]);
  expect(empty.code).toBe(1);
  expect(empty.env.errors[0].code).toBe("INVALID_INPUT");
});

test("a search page reads a window of ids and says how far it looked; the cursor finds the older match", async () => {
  const old = await add("--", "echo", "needle-in-an-old-job");
  await add("--", "echo", "hay");
  await skipJobIdsTo(q, 40_000);
  const newest = await add("--", "echo", "hay");
  expect(newest).toBe(40_000);
  const first = await q.json(["list", "--search", "NEEDLE"]);
  expect(first.code).toBe(0);
  expect(first.env.data.jobs).toEqual([]);
  expect(first.env.meta.pagination).toMatchObject({ truncated: true, searched_to: 15_001, cursor: 15_001 });
  const text = await q.run(["list", "--search", "NEEDLE"]);
  expect(text.stdout).toContain("no jobs among ids 15001 and up");
  expect(text.stdout).toContain("--cursor 15001");
  const next = await q.json(["list", "--search", "NEEDLE", "--cursor", "15001"]);
  expect(next.env.data.jobs.map((j: { id: number }) => j.id)).toEqual([old]);
  expect(next.env.meta.pagination.truncated).toBe(false);
  // An action is not a page: --all reads every job.
  const dry = await q.json(["cancel", "--all", "--search", "needle", "--dry-run"]);
  expect(dry.env.data.jobs.map((j: { job_id: number }) => j.job_id)).toEqual([old]);
});

test("cancel --all cancels every queued match in one go; --dry-run names them and changes nothing", async () => {
  const a = await add("--queue", "nightly", "--tag", "run=7", "--", "true");
  const b = await add("--queue", "nightly", "--tag", "run=7", "--", "true");
  const other = await add("--queue", "nightly", "--tag", "run=8", "--", "true");
  const dependent = await add("--queue", "later", "--needs", String(a), "--", "true");
  const dry = await q.json(["cancel", "--all", "--queue", "nightly", "--tag", "run=7", "--dry-run"]);
  expect(dry.code).toBe(0);
  expect(dry.env.data).toMatchObject({ count: 2, dry_run: true });
  expect(dry.env.data.jobs.map((j: { job_id: number }) => j.job_id).sort()).toEqual([a, b]);
  for (const id of [a, b, other]) expect((await q.job(id))?.state).toBe("queued");
  const real = await q.json(["cancel", "--all", "--queue", "nightly", "--tag", "run=7"]);
  expect(real.code).toBe(0);
  expect(real.env.data.count).toBe(2);
  expect(real.env.data.dry_run).toBeUndefined();
  expect((await q.job(a))?.state).toBe("canceled");
  expect((await q.job(b))?.state).toBe("canceled");
  expect((await q.job(other))?.state).toBe("queued");
  // The need's end closed its dependent, as a named cancel does.
  expect((await q.job(dependent))?.state).toBe("canceled");
  expect(real.env.data.jobs.find((j: { job_id: number }) => j.job_id === a).closed).toEqual([dependent]);
  // Nothing left to cancel is an empty answer, not an error.
  const again = await q.json(["cancel", "--all", "--queue", "nightly", "--tag", "run=7"]);
  expect(again.code).toBe(0);
  expect(again.env.data.count).toBe(0);
});

test("cancel and delete refuse filters without --all, ids with --all, and neither, naming the fix", async () => {
  const id = await add("--", "true");
  for (const [args, code, words] of [
    [["cancel", "--queue", "x"], "INVALID_INPUT", "--queue selects jobs only with --all"],
    [["cancel", "--all", String(id)], "INVALID_INPUT", "not both"],
    [["cancel"], "MISSING_REQUIRED", "--all with filters"],
    [["delete", "--state", "dead"], "INVALID_INPUT", "--state selects jobs only with --all"],
    [["delete", "--yes"], "MISSING_REQUIRED", "--all with filters"],
    [["delete", "--all", "--batch", "nope", "--yes"], "NOT_FOUND", 'no batch named "nope"'],
  ] as const) {
    const r = await q.json([...args]);
    expect(r.code).toBe(1);
    expect(r.env.errors[0].code).toBe(code);
    expect(r.env.errors[0].message).toContain(words);
    expect(r.env.errors[0].remediation).toMatch(/spoolctl (cancel|delete)|batch list/);
  }
  expect((await q.job(id))?.state).toBe("queued");
});

test("delete --all takes ended jobs by default, previews what it closes, and wants --yes", async () => {
  const dead = await add("--queue", "ci", "--max-retries", "0", "--", "false");
  const done = await add("--queue", "ci", "--", "true");
  await q.run(["work", "--queue", "ci", "--drain"]);
  const queuedNeed = await add("--queue", "ci", "--after", "1h", "--", "true");
  const dependent = await add("--queue", "deploy", "--needs", String(queuedNeed), "--", "true");
  // Default: the ended states only; the queued job stays.
  const dry = await q.json(["delete", "--all", "--queue", "ci", "--dry-run"]);
  expect(dry.code).toBe(0);
  expect(dry.env.data).toMatchObject({ count: 2, dry_run: true, irreversible: false });
  expect([...dry.env.data.job_ids].sort()).toEqual([dead, done].sort());
  expect(dry.env.data.deleted_attempts).toBe(2);
  // --state queued takes the queued need, and the preview names the dependent it would close.
  const closing = await q.json(["delete", "--all", "--queue", "ci", "--state", "queued", "--dry-run"]);
  expect(closing.env.data.job_ids).toEqual([queuedNeed]);
  expect(closing.env.data.closed).toEqual([dependent]);
  expect((await q.job(dependent))?.state).toBe("queued");
  // Without --yes off a terminal: SAFETY_BLOCK whose remediation repeats the selection.
  const blocked = await q.json(["delete", "--all", "--queue", "ci", "--state", "dead"]);
  expect(blocked.code).toBe(2);
  expect(blocked.env.errors[0].code).toBe("SAFETY_BLOCK");
  expect(blocked.env.errors[0].remediation).toEndWith("--all --state dead --queue ci --yes");
  expect(await q.job(dead)).not.toBeNull();
  const gone = await q.json(["delete", "--all", "--queue", "ci", "--state", "dead", "--yes"]);
  expect(gone.code).toBe(0);
  expect(gone.env.data).toMatchObject({ count: 1, job_ids: [dead], irreversible: true });
  expect(await q.job(dead)).toBeNull();
  expect((await q.job(done))?.state).toBe("done");
  // A running job is never selected: the state choice refuses it by name.
  const running = await q.json(["delete", "--all", "--state", "running", "--yes"]);
  expect(running.code).toBe(1);
  expect(running.env.errors[0].code).toBe("INVALID_INPUT");
});
