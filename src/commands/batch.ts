/**
 * `spoolctl batch seal|show|list` (reached as `batch <action>`, rewritten to
 * `batch-<action>`): a batch's seal, counts and verdict (docs/architecture.md
 * "Batches"; README "Batches in CI").
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { FlagDef } from "../contract/flags.ts";
import { JOB_STATES } from "../model/job.ts";
import { type BatchSummary, parseBatchName } from "../ops/batch.ts";
import { listBatches, sealBatch, showBatch } from "../store/verbs/batches.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/** The batch-name positional of `batch <action>`. */
function namePositional(action: string) {
  return {
    type: "positional",
    description: "the batch's name (as given to add --batch)",
    valueHint: "NAME",
    required: true,
    noun: "a batch name",
    hint: `spoolctl batch ${action} NAME  (spoolctl batch list names them)`,
  } as const satisfies FlagDef;
}

/** One line: name, state, counts. */
export function batchLine(b: BatchSummary): string {
  const state =
    b.failed_at !== null
      ? `failed fast (job ${b.failed_job_id} ended dead)`
      : !b.sealed
        ? "open"
        : b.settled
          ? b.all_succeeded
            ? "succeeded"
            : "failed"
          : "sealed, running";
  const counts = JOB_STATES.filter((s) => b.counts[s] > 0)
    .map((s) => `${b.counts[s]} ${s}`)
    .join(", ");
  return `${b.name}: ${state}; ${b.total} job${b.total === 1 ? "" : "s"}${counts ? ` (${counts})` : ""}${b.fail_fast ? `; fail-fast ${b.fail_fast}` : ""}`;
}

/** `batch seal NAME`. */
export const seal = defineVerb({
  name: "batch-seal",
  description:
    "Seal a batch: no job can join it any more, so wait --batch may end once its jobs ended. Sealing a name no add used makes an empty batch.",
  mutates: true,
  examples: [
    "spoolctl batch seal ci-42",
    "spoolctl add --batch ci-42 --seal -- ./last-step.sh   # the same, on the last add",
  ],
  flags: { ...COMMON_FLAGS, name: namePositional("seal") },
  async run(ctx): Promise<VerbResult<BatchSummary>> {
    const name = parseBatchName("NAME", ctx.args.name);
    const data = await sealBatch(await ctx.open({ create: true }), name);
    return {
      data,
      warnings:
        data.total === 0
          ? [{ code: "EMPTY_BATCH", message: `batch ${name} is sealed with no job: wait --batch ${name} ends at once` }]
          : [],
    };
  },
  render: ({ data }) => `sealed ${batchLine(data)}`,
});

/** `batch show NAME`. */
export const show = defineVerb({
  name: "batch-show",
  description: "One batch: sealed or open, fail-fast, its jobs counted by state, and its verdict once settled.",
  examples: ["spoolctl batch show ci-42", "spoolctl batch show ci-42 --json"],
  flags: { ...COMMON_FLAGS, name: namePositional("show") },
  async run(ctx): Promise<VerbResult<BatchSummary>> {
    return { data: await showBatch(await ctx.open({ create: false }), parseBatchName("NAME", ctx.args.name)) };
  },
  render: ({ data }) => batchLine(data),
});

/** `batch list`. */
export const list = defineVerb({
  name: "batch-list",
  description: "Batches, newest first, with their counts and verdicts.",
  examples: ["spoolctl batch list", "spoolctl batch list --limit 5 --json"],
  flags: {
    ...COMMON_FLAGS,
    limit: {
      type: "string",
      description: "at most this many batches",
      valueHint: "N",
      valueType: "integer",
      default: "50",
      min: 1,
      max: 10000,
    },
  },
  async run(ctx): Promise<VerbResult<{ batches: BatchSummary[] }>> {
    return { data: { batches: await listBatches(await ctx.open({ create: false }), ctx.args.limit) } };
  },
  render: ({ data }) => (data.batches.length === 0 ? "no batches" : data.batches.map(batchLine).join("\n")),
});
