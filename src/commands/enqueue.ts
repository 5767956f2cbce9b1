/** QueueCTL's `spoolctl enqueue JSON`: add one job whose id becomes its idempotency key. */
import type { VerbResult } from "../contract/envelope.ts";
import type { EnqueueData } from "../describe/schemas-operator.ts";
import { parseEnqueueSpec } from "../ops/enqueue.ts";
import { validateAddInput } from "../ops/job-spec.ts";
import { captureTrace } from "../ops/trace-context.ts";
import { addJobs } from "../store/verbs/add.ts";
import { writeRidingOut } from "./ride-out.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const EXAMPLE = `spoolctl enqueue '{"id":"job1","command":"echo hello"}'`;

export default defineVerb({
  name: "enqueue",
  description:
    'QueueCTL form of add: one JSON job spec. Its "id" becomes the idempotency key and names the job wherever an ID is taken; "command" runs through sh -c.',
  examples: [
    `spoolctl enqueue '{"id":"job1","command":"echo hello","max_retries":3}'`,
    `spoolctl enqueue '{"id":"build-42","argv":["make","test"],"timeout":"10m","queue":"builds"}'`,
    "spoolctl show job1",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    spec: {
      type: "positional",
      description: "the job as a JSON object",
      valueHint: "JSON",
      required: true,
      valueType: "json",
      noun: "a JSON job spec",
      hint: `quote the JSON as one argument: ${EXAMPLE}`,
    },
  },
  async run(ctx): Promise<VerbResult<EnqueueData>> {
    const input = parseEnqueueSpec(ctx.args.spec);
    const spec = validateAddInput(
      input,
      (name) => (name === "c" ? "command" : name === "key" ? "id" : name.replaceAll("-", "_")),
      process.cwd(),
    );
    // The adder's trace, as add keeps it (README "Metrics and traces").
    const traced = captureTrace(process.env);
    const { jobs, warnings } = await writeRidingOut(ctx, (store) => addJobs(store, [{ ...spec, trace: traced.trace }]));
    return { data: { ...jobs[0]!, id: input.key }, warnings: [...traced.warnings, ...warnings] };
  },
  render({ data }) {
    return data.deduplicated
      ? `Job ${data.job_id} (id ${data.id}) is already ${data.state}`
      : `Added job ${data.job_id} (id ${data.id})`;
  },
});
