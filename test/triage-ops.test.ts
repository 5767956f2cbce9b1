/**
 * Triage's group operations in-process against a real queue (issue 12;
 * docs/architecture.md "Triage", "Idempotency"): a group retried as
 * `retry --all` requeues the newest job of each idempotency key; a group
 * retried with new settings is all or nothing under the key rule; a group
 * deleted takes its rows and files; a dry run of retry --all changes nothing.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { SpoolError } from "../src/contract/errors.ts";
import { openQueue, type Store } from "../src/store/index.ts";
import { deleteJobs, deletionPreview } from "../src/store/verbs/delete.ts";
import { retryJobs, retryWithOverrides } from "../src/store/verbs/retry.ts";
import { failureGroups } from "../src/store/verbs/triage.ts";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

let store: Store;
const q = useTempQueue({
  teardown: async () => {
    await store?.close();
  },
});

/** Adds a job with key `key` that dies at once, and drains it; its id. */
async function deadWithKey(key: string): Promise<number> {
  const id = await addJob(
    q,
    "--max-retries",
    "0",
    "--key",
    key,
    "--",
    "sh",
    "-c",
    `echo "cannot reach host ${key.length}" >&2; exit 3`,
  );
  await drain(q);
  return id;
}

test("a group whose jobs share an idempotency key: retry all requeues the newest of the key, the rest stay dead with a warning", async () => {
  const first = await deadWithKey("nightly");
  const second = await deadWithKey("nightly"); // the key was free again once the first died
  const other = await deadWithKey("hourly");
  store = await openQueue(q.location(), { create: false });
  const [group] = await failureGroups(store, { tags: {} });
  expect(group!.count).toBe(3); // "cannot reach host <n>"
  const before = JSON.stringify(await q.snapshot());
  // Named jobs sharing a key are refused as a whole (retry with new settings): nothing changes.
  const refused = await retryWithOverrides(store, group!.job_ids.map(String), { timeoutSeconds: 60 }).catch((e) => e);
  expect(refused).toBeInstanceOf(SpoolError);
  expect(refused.code).toBe("IDEMPOTENCY_CONFLICT");
  expect(JSON.stringify(await q.snapshot())).toBe(before);
  // As retry --all over the group's ids: the newest job of each key.
  const dry = await retryJobs(
    store,
    { filter: { ids: group!.job_ids, states: ["dead", "canceled"] } },
    { force: false, dryRun: true },
  );
  expect(JSON.stringify(await q.snapshot())).toBe(before);
  const done = await retryJobs(
    store,
    { filter: { ids: group!.job_ids, states: ["dead", "canceled"] } },
    { force: false },
  );
  expect(done).toEqual(dry);
  expect(done.jobs.map((j) => j.job_id).sort()).toEqual([second, other].sort());
  expect(done.skipped).toEqual([{ job_id: first, key: "nightly", holder_id: second }]);
  expect((await q.job(first))!.state).toBe("dead");
});

test("retry all with new settings changes each job in one transaction; delete all removes rows and files, as the preview said", async () => {
  const ids = [await deadWithKey("a"), await deadWithKey("bb"), await deadWithKey("cc")];
  store = await openQueue(q.location(), { create: false });
  const done = await retryWithOverrides(store, [String(ids[0])], { maxRetries: 4, env: { MODE: "safe" } });
  expect(done[0]!.changed).toEqual({ max_retries: { from: 0, to: 4 }, env_set: ["MODE"] });
  expect(await q.job(ids[0]!)).toMatchObject({ state: "queued", max_retries: 4, env: { MODE: "safe" } });

  const doomed = ids.slice(1);
  const paths = (await Promise.all(doomed.map((id) => q.attempts(id))))
    .flat()
    .flatMap((a) => [a.stdout_path, a.stderr_path]);
  const preview = await deletionPreview(store, doomed);
  expect(preview).toMatchObject({ jobs: 2, attempts: 2, events: 8 });
  const gone = await deleteJobs(store, doomed.map(String));
  expect(gone).toMatchObject({
    job_ids: doomed,
    deleted_attempts: 2,
    deleted_events: 8,
    freed_bytes: preview.bytes,
    warnings: [],
  });
  for (const id of doomed) expect(await q.job(id)).toBeNull();
  for (const path of paths) expect(existsSync(path)).toBe(false);
  // A queued job is never deleted: all or nothing.
  const refused = await deleteJobs(store, [String(ids[0])]).catch((e) => e);
  expect([refused.code, (await q.job(ids[0]!))?.state]).toEqual(["CONFLICT", "queued"]);
});
