/**
 * `feedback` (docs/architecture.md "The operations", "Reads"): one verdict
 * about a job, read in one snapshot and decided by `feedbackOf` of
 * src/ops/feedback.ts.
 */
import type { Warning } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import { type FeedbackData, feedbackOf } from "../../ops/feedback.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { resolveJob } from "./job-refs.ts";
import { retryBlockIn } from "./need-checks.ts";
import { pickAttemptIn, streamTailIn } from "./output.ts";

/** The verdict about `job` inside `tx`: its latest attempt and the last `tailBytes` of each stream. */
export async function feedbackIn(
  tx: StoreReader,
  job: Job,
  tailBytes: number,
): Promise<{ data: FeedbackData; warnings: Warning[] }> {
  const attempt = await pickAttemptIn(tx, job, null);
  return feedbackOf(
    job,
    attempt,
    {
      stdout: await streamTailIn(tx, attempt, "stdout", tailBytes),
      stderr: await streamTailIn(tx, attempt, "stderr", tailBytes),
    },
    attempt ? await tx.eventsOf(job.id) : [],
    await retryBlockIn(tx, job),
  );
}

/**
 * The verdict about the job `ref` names (id, `last` or idempotency key): its
 * state, its latest attempt's end, the last `tailBytes` of each stream and the
 * next command; warns `NO_ATTEMPTS_YET`. One read snapshot: no guard, no
 * event, no wake. Raises `INVALID_INPUT`/`NOT_FOUND` as `resolveJob` does.
 */
export function jobFeedback(
  store: SnapshotReader,
  ref: string,
  tailBytes: number,
): Promise<{ data: FeedbackData; warnings: Warning[] }> {
  return store.read(async (tx) => feedbackIn(tx, await resolveJob(tx, ref), tailBytes));
}
