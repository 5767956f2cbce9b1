/**
 * A stepped host clock on PostgreSQL (issue 30 item 5; docs/architecture.md
 * "Clocks"): the queue's clock is the database's time at the last measurement
 * plus this process's monotonic time since, so a step of the host's wall clock
 * (SPOOLCTL_TEST_CLOCK_OFFSET_FILE: +20 s, as an NTP step) moves no time a
 * worker judges schedule slots, leases or due times by. Before, the host's
 * offset to the database was measured again only every 60 s, and a host
 * stepped +20 s fired slots 20 s early.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { hostNowMs } from "../src/store/host-clock.ts";
import { openQueue } from "../src/store/index.ts";
import { PG_ENABLED } from "./store/drivers.ts";
import { waitFor } from "./support/wait.ts";

test.skipIf(!PG_ENABLED)(
  "a +20 s step of the host clock leaves the PostgreSQL queue's clock on the database's",
  async () => {
    const { pgDatabaseForTest } = await import("./support/pg-server.ts");
    const url = await pgDatabaseForTest(import.meta.file);
    const dir = mkdtempSync(join(tmpdir(), "spoolctl-clock-"));
    const offsetFile = join(dir, "offset");
    writeFileSync(offsetFile, "0");
    process.env.SPOOLCTL_TEST_CLOCK_OFFSET_FILE = offsetFile;
    const sql = new SQL(url, { max: 1 });
    const store = await openQueue(
      { dbPath: url, spoolDir: join(dir, "queue.spool"), source: "flag" },
      { create: true },
    );
    try {
      const dbNow = async () =>
        ((await sql`SELECT extract(epoch from clock_timestamp())::float8 AS t`)[0] as { t: number }).t;
      const apart = async () => Math.abs(store.now() - (await dbNow()));
      expect(await apart()).toBeLessThan(2);
      // The step: this process's wall clock jumps 20 s ahead (re-read within 100 ms).
      writeFileSync(offsetFile, "20");
      await waitFor("the step seen by this process", async () => {
        return hostNowMs() - Date.now() > 19_000;
      });
      // Well before the 60 s re-measurement: the queue's clock still follows the database's.
      expect(await apart()).toBeLessThan(2);
      // A step back, 20 s behind.
      writeFileSync(offsetFile, "-20");
      await waitFor("the step back seen by this process", async () => {
        return hostNowMs() - Date.now() < -19_000;
      });
      expect(await apart()).toBeLessThan(2);
    } finally {
      delete process.env.SPOOLCTL_TEST_CLOCK_OFFSET_FILE;
      store.close?.();
      await sql.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
