/** QueueCTL's `spoolctl enqueue JSON` (SPEC §5): add one job whose id becomes its idempotency key. */
import { SpoolError } from "../contract/errors.ts";
import { addJobs, validateAddInput, type AddedJob } from "../ops/add.ts";
import { parseEnqueueSpec } from "../ops/enqueue.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

export default defineVerb<AddedJob & { id: string }>({
  name: "enqueue",
  description: "QueueCTL form of add: one JSON job spec. Its \"id\" becomes the idempotency key and names the job wherever an ID is taken; \"command\" runs through sh -c.",
  examples: [
    `spoolctl enqueue '{"id":"job1","command":"echo hello","max_retries":3}'`,
    `spoolctl enqueue '{"id":"build-42","argv":["make","test"],"timeout":"10m","queue":"builds"}'`,
    "spoolctl show job1",
  ],
  mutates: true,
  flags: { ...COMMON_FLAGS, spec: { type: "positional", description: "the job as a JSON object", valueHint: "JSON", required: true, valueType: "json" } },
  async run(ctx) {
    const got = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (got.length === 0) throw new SpoolError("MISSING_REQUIRED", "enqueue needs a JSON job spec", { remediation: `spoolctl enqueue '{"id":"job1","command":"echo hello"}'` });
    if (got.length > 1) throw new SpoolError("INVALID_INPUT", `enqueue takes one JSON argument (got ${got.length}); quote the JSON`, { remediation: `spoolctl enqueue '{"id":"job1","command":"echo hello"}'` });
    const input = parseEnqueueSpec(got[0]!);
    const spec = validateAddInput(input, (name) => (name === "c" ? "command" : name === "key" ? "id" : name.replaceAll("-", "_")), process.cwd());
    const { jobs, warnings } = await addJobs(await ctx.open({ create: true }), [spec]);
    return { data: { ...jobs[0]!, id: input.key }, warnings };
  },
  render({ data }) {
    return data.deduplicated ? `Job ${data.job_id} (id ${data.id}) is already ${data.state}` : `Added job ${data.job_id} (id ${data.id})`;
  },
});
