/**
 * `prune` (SPEC §4–§5, issue 4) through the real CLI. Ages jobs by setting
 * `finished_at` / `created_at` directly (patchJobs, a test-only shortcut: no verb moves time).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { keysOf, reference } from "./support/envelopes.ts";
import { addJob, drain } from "./support/jobs.ts";
import { patchJobs, useOldOutputLayout } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

const DAY = 86400;

/** Makes a terminal job look finished `days` ago. */
function age(id: number, days: number): Promise<void> {
  return patchJobs(q, [id], { finished_at: Date.now() / 1000 - days * DAY });
}

test("prune needs --older-than, and --yes or --dry-run (SAFETY_BLOCK)", async () => {
  let r = await q.json(["prune", "--yes"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  r = await q.json(["prune", "--older-than", "7d"]);
  expect([r.code, r.env.errors[0].code]).toEqual([2, "SAFETY_BLOCK"]);
  r = await q.json(["prune", "--older-than", "7d", "--yes", "--dry-run"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  r = await q.json(["prune", "--older-than", "a week", "--yes"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  r = await q.json(["prune", "--older-than", "1d", "--state", "queued", "--yes"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(r.env.errors[0].message).toContain("terminal");
});

test("an empty dry run matches envelope-prune-empty.json and creates nothing", async () => {
  const r = await q.json(["prune", "--older-than", "7d", "--dry-run"]);
  expect(r.code).toBe(0);
  const ref = reference("envelope-prune-empty.json");
  expect(r.env.data).toEqual(ref ? ref.data : r.env.data);
  if (ref) expect(keysOf(r.env)).toEqual(keysOf(ref));
  expect(await q.exists()).toBe(false);
});

test("dry run reports, --yes deletes rows then files; queued and young jobs stay", async () => {
  const old = await addJob(q, "--", "echo", "old");
  const young = await addJob(q, "--", "echo", "young");
  const dead = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 1");
  await drain(q);
  const queued = await addJob(q, "--", "true");
  await age(old, 10);
  await age(dead, 10);
  await patchJobs(q, [queued], { created_at: Date.now() / 1000 - 30 * DAY });
  const outDir = (id: number) => join(q.spool, "output", `${id}.1.stdout`);
  expect(existsSync(outDir(old))).toBe(true);

  const preview = await q.json(["prune", "--older-than", "7d", "--dry-run"]);
  expect(preview.code).toBe(0);
  expect(preview.env.data).toMatchObject({
    actual: false,
    dry_run: true,
    matched: 2,
    deleted_jobs: 2,
    deleted_attempts: 2,
    deleted_events: 7,
  });
  expect(preview.env.data.freed_bytes).toBe(4 + 5);
  expect(await q.job(old)).not.toBeNull();

  const r = await q.json(["prune", "--older-than", "7d", "--yes"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({
    actual: true,
    dry_run: false,
    irreversible: true,
    matched: 2,
    deleted_jobs: 2,
    deleted_attempts: 2,
    deleted_events: 7,
    freed_bytes: 9,
  });
  expect(await q.job(old)).toBeNull();
  expect(await q.job(dead)).toBeNull();
  for (const id of [old, dead]) {
    expect(await q.attempts(id)).toEqual([]);
    expect(await q.events(id)).toEqual([]);
  }
  expect(existsSync(outDir(old))).toBe(false);
  expect(existsSync(outDir(dead))).toBe(false);
  expect((await q.job(young))?.state).toBe("done");
  expect(existsSync(outDir(young))).toBe(true);
  expect((await q.job(queued))?.state).toBe("queued");

  const again = await q.run(["prune", "--older-than", "7d", "--yes"]);
  expect(again.stdout).toBe("nothing to prune\n");
});

test("--state narrows to some terminal states; --older-than 0 takes every terminal job", async () => {
  const done = await addJob(q, "--", "true");
  const dead = await addJob(q, "--max-retries", "0", "--", "false");
  await drain(q);
  const canceled = await addJob(q, "--", "true");
  await q.run(["cancel", String(canceled)]);
  let r = await q.json(["prune", "--older-than", "0", "--state", "dead", "--state", "canceled", "--yes"]);
  expect(r.env.data.deleted_jobs).toBe(2);
  expect(await q.job(dead)).toBeNull();
  expect(await q.job(canceled)).toBeNull();
  expect((await q.job(done))?.state).toBe("done");
  r = await q.json(["prune", "--older-than", "0", "--state", "completed", "--yes"]);
  expect(r.env.data.deleted_jobs).toBe(1);
});

test("a running job is never pruned, even with an old finished_at", async () => {
  const id = await addJob(q, "--", "true");
  // Staged: a running job (no worker needed) that looks finished and added long ago.
  await patchJobs(q, [id], { state: "running", finished_at: 1, created_at: 1 });
  const r = await q.json(["prune", "--older-than", "0", "--yes"]);
  expect(r.env.data.deleted_jobs).toBe(0);
  expect((await q.job(id))?.state).toBe("running");
});

test("human text of a dry run and of a prune", async () => {
  await addJob(q, "--", "echo", "x");
  await drain(q);
  const dry = await q.run(["prune", "--older-than", "0", "--dry-run"]);
  expect(dry.stdout).toMatch(
    /^would delete 1 job \(1 attempt, 3 events, 2 B of output\); run again with --yes to delete\n$/,
  );
  const real = await q.run(["prune", "--older-than", "0", "--yes"]);
  expect(real.stdout).toBe("deleted 1 job (1 attempt, 3 events, 2 B of output)\n");
});

test("a spool of the layout before the flat one (output/<job>/<attempt>/stdout) is still read, and pruned with its folders", async () => {
  const id = await addJob(q, "--", "sh", "-c", "echo kept; echo err >&2");
  await drain(q);
  await useOldOutputLayout(q, q.spool, id);
  const folder = join(q.spool, "output", String(id));
  expect(existsSync(join(folder, "1", "stdout"))).toBe(true);
  expect(existsSync(join(q.spool, "output", `${id}.1.stdout`))).toBe(false);
  expect((await q.run(["output", String(id), "--stream", "stdout", "--raw"])).stdout).toBe("kept\n");
  const r = await q.json(["prune", "--older-than", "0", "--yes"]);
  expect(r.env.data).toMatchObject({ deleted_jobs: 1, freed_bytes: 5 + 4 });
  expect(existsSync(folder)).toBe(false);
});

// SQLite's spool on this host's disk: an immutable file (chattr +i) cannot be removed even by root.
test("a file that cannot be removed: the rows go first (none names a deleted file), the file is named in an OUTPUT_NOT_REMOVED warning", async () => {
  const a = await addJob(q, "--", "echo", "a");
  const b = await addJob(q, "--", "echo", "b");
  await drain(q);
  await age(a, 10);
  await age(b, 10);
  const files = async (id: number) => (await q.attempts(id)).flatMap((x) => [x.stdout_path, x.stderr_path]);
  const [aFiles, bFiles] = [await files(a), await files(b)];
  if (Bun.spawnSync(["chattr", "+i", bFiles[0]!], { stderr: "ignore" }).exitCode !== 0)
    return console.warn("skipped: chattr +i not supported here");
  try {
    const r = await q.json(["prune", "--older-than", "7d", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.env.data.deleted_jobs).toBe(2);
    expect(r.env.warnings).toEqual([{ code: "OUTPUT_NOT_REMOVED", message: expect.stringContaining(bFiles[0]!) }]);
    expect(r.env.warnings[0].message).toContain(`job ${b} was deleted`);
    expect(await q.jobs()).toEqual([]); // no row is left pointing at a removed file
    for (const f of aFiles) expect(existsSync(f)).toBe(false);
    expect(existsSync(bFiles[0]!)).toBe(true);
  } finally {
    Bun.spawnSync(["chattr", "-i", bFiles[0]!]);
  }
});
