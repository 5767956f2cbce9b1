/**
 * Job names in the store (docs/architecture.md "Job names"): stored by
 * insertJob and the batch insert of addJobs, read back by every job read, and
 * looked up by findLatestJobByName (the newest of a name, any state), which
 * `resolveJob` tries after the idempotency key.
 */
import { expect, test } from "bun:test";
import { findByKeyOrName, resolveJob } from "../../src/store/verbs/job-refs.ts";
import { forEachDriver, insertJob, newJob } from "../support/store.ts";

forEachDriver("job names", (q) => {
  test("insertJob and addJobs store the name; getJob and listJobs read it back", async () => {
    const one = await insertJob(q.store, { name: "build" });
    expect(one.name).toBe("build");
    const many = await q.store.write(async (tx) =>
      tx.addJobs([newJob({ name: "test[os=linux]" }), newJob(), newJob({ name: "test[os=mac]" })], q.store.now()),
    );
    expect(many.map((j) => j.name)).toEqual(["test[os=linux]", null, "test[os=mac]"]);
    expect((await q.store.read(async (tx) => tx.getJob(one.id)))!.name).toBe("build");
    const listed = await q.store.read(async (tx) => tx.listJobs({ limit: 10 }));
    expect(listed.map((j) => j.name)).toEqual(["test[os=mac]", null, "test[os=linux]", "build"]);
  });

  test("findLatestJobByName: the newest job of the name, null for none; a key wins in resolveJob", async () => {
    const older = await insertJob(q.store, { name: "nightly" });
    const newer = await insertJob(q.store, { name: "nightly" });
    await insertJob(q.store, { name: "other" });
    expect((await q.store.read(async (tx) => tx.findLatestJobByName("nightly")))!.id).toBe(newer.id);
    expect(await q.store.read(async (tx) => tx.findLatestJobByName("night"))).toBeNull();
    expect(older.id).toBeLessThan(newer.id);
    const keyed = await insertJob(q.store, { idempotency_key: "nightly" });
    expect((await q.store.read(async (tx) => findByKeyOrName(tx, "nightly")))!.id).toBe(keyed.id);
    expect((await q.store.read(async (tx) => resolveJob(tx, "other")))!.name).toBe("other");
    await expect(q.store.read(async (tx) => resolveJob(tx, "nobody"))).rejects.toThrow(/id, key or name "nobody"/);
  });
});
