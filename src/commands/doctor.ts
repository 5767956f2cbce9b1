/** `spoolctl doctor`: read-only readiness checks; exit 3 (with ok:true) when not ready (docs/contract.md "Exit codes and codes"). */

import type { VerbResult } from "../contract/envelope.ts";
import { EXIT } from "../contract/errors.ts";
import { addStrandedCheck, type DoctorData, runDoctor } from "../ops/doctor.ts";
import { diagnoseQueue, SCHEMA_VERSION, writableOrCreatable } from "../store/index.ts";
import { describeLocation } from "../store/location-report.ts";
import { locationDisks } from "../store/space.ts";
import { statusSnapshot } from "../store/verbs/status.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

const MARKS = { pass: "ok  ", warn: "warn", fail: "FAIL", skip: "skip" } as const;

export default defineVerb({
  name: "doctor",
  description:
    "Check readiness without changing anything: project config, database opens, WAL, integrity, schema version, writable folders, Bun version. Exit 3 (ok:true, data.ready=false) when a check fails.",
  examples: ["spoolctl doctor", "spoolctl doctor --json", "spoolctl doctor --db /srv/queue.db"],
  flags: { ...COMMON_FLAGS },
  async run(ctx): Promise<VerbResult<DoctorData>> {
    const probes = { diagnose: diagnoseQueue, writable: writableOrCreatable, disks: locationDisks };
    const data = await runDoctor(describeLocation(ctx.args.db), probes, SCHEMA_VERSION);
    const status = (id: string) => data.checks.find((c) => c.id === id)?.status;
    // A damaged file is refused by every open (docs/architecture.md "A damaged file"): its checks said it all.
    if (status("db_opens") === "pass" && status("integrity") !== "fail") {
      // Read-only: a queue that does not exist reads as empty, nothing is created (db_opens already says so).
      const store = await ctx.open({ create: false, absentOk: true });
      const health = healthContext(store);
      const snapshot = await statusSnapshot(store, judgeRecord, 0, health);
      addStrandedCheck(data, snapshot.stranded, snapshot.live_workers, ctx.args.db);
    }
    return { data, exitCode: data.ready ? EXIT.OK : EXIT.ENVIRONMENT };
  },
  render({ data }) {
    const lines = data.checks.map(
      (c) =>
        `${MARKS[c.status]}  ${c.id.padEnd(16)} ${c.message}${c.remediation && c.status !== "pass" ? `\n      -> ${c.remediation}` : ""}`,
    );
    const s = data.summary;
    lines.push(
      `${data.ready ? "ready" : "NOT READY"}: ${s.passed} passed, ${s.warnings} warnings, ${s.failed} failed, ${s.skipped} skipped`,
    );
    return lines.join("\n");
  },
});
