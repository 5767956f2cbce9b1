/**
 * Hints about jobs closed by their needs (docs/architecture.md
 * "Dependencies"): `feedback` and `show` of a dependent closed by its need's
 * death name the retry that works (the root of the chain, not the job
 * itself, whose retry is refused); `retry` of it says the same; `delete`'s
 * confirmation counts the dependents it will close, and they then say "need
 * deleted"; `retry --no-cascade` names the jobs it left closed; `list --state
 * dead --group` counts the closed dependents. On both stores.
 */
import { expect, test } from "bun:test";
import { drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** A dead job 1 (`A`) with a chain 2 (`B`, needs A) and 3 (`C`, needs B) closed by its death. */
async function deadChain(): Promise<[number, number, number]> {
  const a = await q.addJob("--key", "A", "--max-retries", "0", "--", "false");
  const b = await q.addJob("--key", "B", "--needs", "A", "--", "true");
  const c = await q.addJob("--key", "C", "--needs", "B", "--", "true");
  await drain(q);
  expect((await q.job(a))!.state).toBe("dead");
  expect([(await q.job(b))!.state, (await q.job(c))!.state]).toEqual(["canceled", "canceled"]);
  return [a, b, c];
}

test("feedback, show and retry of a closed dependent name the retry of the root need, which works", async () => {
  const [a, b, c] = await deadChain();
  const retryA = `spoolctl retry --db ${q.dbWord} ${a}`;
  for (const id of [b, c]) {
    expect((await q.json(["feedback", String(id)])).env.data.remediation).toBe(retryA);
    expect((await q.run(["feedback", String(id)])).stdout).toContain(`next: ${retryA}\n`);
  }
  const show = await q.run(["show", String(c)]);
  expect(show.stdout).toContain(
    `next          ${retryA}  (retry job ${a}, where its chain of needs failed: that revives this job with it)`,
  );
  expect((await q.json(["show", String(c)])).env.data.retry_blocked).toEqual({
    need_id: b,
    need_state: "canceled",
    retry: a,
  });
  expect((await q.json(["show", String(b)])).env.data.retry_blocked).toEqual({
    need_id: a,
    need_state: "dead",
    retry: a,
  });
  expect((await q.json(["show", String(a)])).env.data.retry_blocked).toBeUndefined();
  const refused = await q.json(["retry", String(c)]);
  expect(refused.code).toBe(5); // CONFLICT
  expect(refused.env.errors[0].remediation).toContain(`(spoolctl retry --db ${q.dbWord} ${a})`);
  expect(refused.env.errors[0].detail).toMatchObject({ job_id: c, need_id: b, retry: a });
  // The hint works: retrying the root revives the whole chain.
  const retried = await q.json(["retry", String(a)]);
  expect(retried.code).toBe(0);
  expect(retried.env.data.revived).toEqual([b, c]);
});

test("retry --no-cascade names the jobs it left closed", async () => {
  const [a, b, c] = await deadChain();
  const r = await q.run(["retry", String(a), "--no-cascade"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`Left 2 jobs closed that waited for it (--no-cascade): ${b}, ${c}`);
  expect((await q.job(c))!.state).toBe("canceled");
  await drain(q); // a fails again: its dependents stay closed either way
  const again = await q.json(["retry", String(a), "--no-cascade"]);
  expect(again.env.data.left_closed).toEqual([b, c]);
});

test("list --state dead --group counts the dependents the failure closed", async () => {
  const [, b, c] = await deadChain();
  const json = await q.json(["list", "--state", "dead", "--group"]);
  expect(json.env.data.groups).toHaveLength(1);
  expect(json.env.data.groups[0].closed_dependents).toEqual([b, c]);
  expect((await q.run(["list", "--state", "dead", "--group"])).stdout).toMatch(/^1 \(\+2 closed\) +dead /m);
});

test("delete's SAFETY_BLOCK counts the dependents it would close; they then say need deleted", async () => {
  const d = await q.addJob("--key", "D", "--after", "1h", "--", "true");
  const e = await q.addJob("--key", "E", "--needs", "D", "--", "true");
  const f = await q.addJob("--key", "F", "--needs", "E", "--", "true");
  const g = await q.addJob("--needs", "D", "--needs-policy", "done", "--", "true"); // met by the delete, not closed
  const blocked = await q.json(["delete", String(d)]);
  expect(blocked.code).toBe(2);
  expect(blocked.env.errors[0].code).toBe("SAFETY_BLOCK");
  expect(blocked.env.errors[0].message).toContain(
    `and closes 2 jobs that wait on it (${e}, ${f}): canceled, need deleted; confirm with --yes`,
  );
  expect(blocked.env.errors[0].detail.closes).toEqual([e, f]);
  // Counting changed nothing.
  expect((await q.jobs()).map((j) => j.state).sort()).toEqual(["queued", "queued", "queued", "queued"]);

  const gone = await q.json(["delete", String(d), "--yes"]);
  expect(gone.env.data.closed).toEqual([e, f]);
  expect((await q.job(g))!.state).toBe("queued");
  const fb = await q.run(["feedback", String(e)]);
  expect(fb.stdout).toContain(`need deleted: job ${d} was deleted before it ran`);
  expect(fb.stdout).not.toContain("ended canceled");
  const closing = (await q.events(e)).find((ev) => ev.event === "canceled")!;
  expect(JSON.parse(closing.detail!)).toMatchObject({ reason: "need_failed", need: d, need_state: "deleted" });
  // Its retry is refused for good (nothing can meet the need): the hint says to add it again, not to retry.
  expect((await q.json(["feedback", String(f)])).env.data.remediation).toBe(`spoolctl show --db ${q.dbWord} ${f}`);
  expect((await q.run(["show", String(f)])).stdout).toContain("(a job it needs was deleted: add its command again)");
});
