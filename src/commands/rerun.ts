/** `spoolctl rerun ID`: run a finished job (done, dead or canceled) again as a new attempt of the same job. */
import type { VerbResult } from "../contract/envelope.ts";
import type { RerunData } from "../describe/schemas-operator.ts";
import { rerunJob } from "../store/verbs/rerun.ts";
import { revivedLine } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb, jobIdPositional } from "./verb.ts";

export default defineVerb({
  name: "rerun",
  description:
    "Run a finished job (done, dead or canceled) again as a new attempt of the same job: its attempts, output and events are kept, its retry budget starts fresh. Refused while another active job holds its idempotency key.",
  examples: [
    "spoolctl rerun 4",
    "spoolctl rerun last          # the newest job",
    "spoolctl rerun nightly-1 --json   # by idempotency key",
  ],
  mutates: true,
  flags: { ...COMMON_FLAGS, id: jobIdPositional("rerun") },
  async run(ctx): Promise<VerbResult<RerunData>> {
    // A missing queue has no job to rerun: open it without creating it.
    return { data: await rerunJob(await ctx.open({ create: false }), ctx.args.id) };
  },
  render({ data }) {
    return `Rerunning job ${data.job_id} (was ${data.from}); now queued for attempt ${data.next_attempt_no}${revivedLine(data.revived)}`;
  },
});
