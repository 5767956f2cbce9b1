/** `spoolctl status` (SPEC §5): counts per state, scheduled, lanes, recent dead jobs. */
import { SpoolError } from "../contract/errors.ts";
import { readStatus, type StatusData, type StateCounts } from "../ops/status.ts";
import { REPORTED_STATES } from "../store/model.ts";
import { formatArgv } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { judgeRecord } from "./workers.ts";

function countsLine(c: StateCounts): string {
  return REPORTED_STATES.map((s) => `${s} ${c[s]}`).join("  ");
}

export default defineVerb<StatusData>({
  name: "status",
  description: "Show job counts per state (and per lane), scheduled jobs, and recent dead jobs.",
  examples: ["spoolctl status", "spoolctl status --json"],
  flags: { ...COMMON_FLAGS },
  run(ctx) {
    const extra = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `status takes no arguments (got ${JSON.stringify(extra.join(" "))})`);
    const store = ctx.open({ create: false });
    return { data: store.read((tx) => readStatus(tx, judgeRecord)) };
  },
  render({ data }) {
    const lines = [countsLine(data.counts)];
    if (data.scheduled > 0) lines.push(`scheduled ${data.scheduled} (queued, not yet due)`);
    const lanes = Object.keys(data.queues).sort();
    if (lanes.length > 1 || (lanes.length === 1 && lanes[0] !== "default")) {
      for (const lane of lanes) lines.push(`  ${lane}: ${countsLine(data.queues[lane]!)}`);
    }
    if (data.recent_dead.length) {
      lines.push("recent dead:");
      for (const j of data.recent_dead) lines.push(`  job ${j.id}  ${j.last_error ?? "-"}  ${formatArgv(j.argv)}`);
    }
    return lines.join("\n");
  },
});
