/**
 * Store.replaced and Store.checkIntact (docs/architecture.md "A vanished or
 * replaced file", "A damaged file"): an open, intact queue is where it was
 * and checks clean on every driver; a SQLite file deleted or replaced under
 * an open store is reported as QUEUE_REPLACED (PostgreSQL has no file).
 */
import { expect, test } from "bun:test";
import { copyFileSync, renameSync, rmSync } from "node:fs";
import { SpoolError } from "../../src/contract/errors.ts";
import { forEachDriver, insertJob } from "../support/store.ts";

forEachDriver("whereabouts", (q, driver) => {
  test("an open queue is where it was, and an intact one checks clean", async () => {
    await insertJob(q.store);
    expect(q.store.replaced()).toBeNull();
    await q.store.checkIntact();
  });

  test.if(driver.name === "sqlite")("a deleted file is QUEUE_REPLACED (deleted: true)", async () => {
    rmSync(q.location.dbPath);
    const lost = q.store.replaced();
    expect(lost).toBeInstanceOf(SpoolError);
    expect(lost!.code).toBe("QUEUE_REPLACED");
    expect(lost!.detail).toMatchObject({ path: q.location.dbPath, deleted: true });
  });

  test.if(driver.name === "sqlite")("a file replaced by another is QUEUE_REPLACED (deleted: false)", async () => {
    const copy = `${q.location.dbPath}.copy`;
    copyFileSync(q.location.dbPath, copy);
    renameSync(copy, q.location.dbPath);
    const lost = q.store.replaced();
    expect(lost?.code).toBe("QUEUE_REPLACED");
    expect(lost!.detail).toMatchObject({ deleted: false });
    expect(lost!.message).toContain("replaced");
  });
});
