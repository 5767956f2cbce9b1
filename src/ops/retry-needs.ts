/**
 * What `retry` and `rerun` do about dependencies (docs/architecture.md
 * "Dependencies"): they refuse or skip a job whose need is still dead or
 * canceled, or was deleted before it was met (the decision here; the retry
 * verb revives the dependents in its transaction).
 */
import { SpoolError } from "../contract/errors.ts";
import type { JobState } from "../model/job.ts";

/**
 * A job a retry cannot requeue: it needs job `need_id`, which is dead or
 * canceled; or it lost a need (`deleted`: deleted before it was met; `need_id`
 * the need its closing named, null when unknown).
 */
export interface BlockedRetry {
  job_id: number;
  need_id: number | null;
  need_state: JobState | "deleted";
}

/**
 * The jobs of `jobIds` that wait for a need that is dead or canceled and not
 * among `jobIds` itself, or that lost a need: requeued, they would wait for
 * ever (docs/architecture.md "Dependencies"). `unmet`: each job's unmet needs,
 * ascending; `stateOf`: the needs' states (absent: gone); `lost`: the jobs that
 * lost a need, each with the need its closing named (or null). A need in
 * `jobIds` counts as retried only when it is not blocked itself (a chain whose
 * root is blocked is blocked whole). Each job names its first such need (a lost
 * one first); sorted by job id.
 */
export function blockedRetries(
  jobIds: number[],
  unmet: Map<number, number[]>,
  stateOf: Map<number, JobState>,
  lost: Map<number, number | null> = new Map(),
): BlockedRetry[] {
  // A need counts as retried only while it is not blocked itself: repeated until nothing more is blocked.
  const retried = new Set(jobIds);
  for (;;) {
    const out: BlockedRetry[] = [...lost].map(([jobId, needId]) => ({
      job_id: jobId,
      need_id: needId,
      need_state: "deleted" as const,
    }));
    for (const [jobId, needs] of unmet) {
      if (lost.has(jobId)) continue;
      for (const needId of needs) {
        if (retried.has(needId)) continue;
        const state = stateOf.get(needId);
        if (state === "dead" || state === "canceled") {
          out.push({ job_id: jobId, need_id: needId, need_state: state });
          break;
        }
      }
    }
    const newlyOut = out.filter((b) => retried.has(b.job_id));
    if (newlyOut.length === 0) return out.sort((a, b) => a.job_id - b.job_id);
    for (const b of newlyOut) retried.delete(b.job_id);
  }
}

/**
 * Why a job's retry would be refused for its needs, and which job to retry
 * instead: `retry`, the root of the chain of closed needs (null: none can be
 * retried, a need was deleted). See `retryBlockIn` (src/store/verbs/need-checks.ts).
 */
export interface RetryBlock {
  need_id: number | null;
  need_state: JobState | "deleted";
  retry: number | null;
}

/**
 * The next command for a job whose retry its needs block: retry the root
 * need (that revives the job with it), or, when a need was deleted, read the
 * job's command to add it again.
 */
export function blockedNext(jobId: number, block: RetryBlock): string {
  return block.retry === null ? `spoolctl show ${jobId}` : `spoolctl retry ${block.retry}`;
}

/** Whether a job lost a need: its count of unmet needs exceeds the unmet edges left (`unmetEdges`). */
export function lostANeed(job: { needs_left: number }, unmetEdges: number): boolean {
  return job.needs_left > unmetEdges;
}

/** The words naming a blocked job's need: "job 12, which is dead", or "job 12, which was deleted". */
function needWords(b: BlockedRetry): string {
  if (b.need_state !== "deleted") return `job ${b.need_id}, which is ${b.need_state}`;
  return b.need_id === null ? "a job that was deleted" : `job ${b.need_id}, which was deleted`;
}

/**
 * `CONFLICT` for a named job whose need failed (retrying the need is what
 * revives it) or was deleted before it was met (nothing can meet it any more:
 * the job's command must be added again). `verb`: the command refused.
 */
export function blockedError(
  b: BlockedRetry,
  verb: "retry" | "rerun" = "retry",
  root: number | null = b.need_id,
): SpoolError {
  const detail = { job_id: b.job_id, need_id: b.need_id, need_state: b.need_state };
  if (b.need_state === "deleted") {
    return new SpoolError(
      "CONFLICT",
      `job ${b.job_id} needs ${needWords(b)} before it succeeded: nothing can meet that need any more, so requeued it would wait for ever; nothing was ${verb === "retry" ? "retried" : "rerun"}`,
      {
        remediation: `add its command again with the needs it should wait for (spoolctl show ${b.job_id} shows the command)`,
        detail,
      },
    );
  }
  return new SpoolError(
    "CONFLICT",
    `job ${b.job_id} needs ${needWords(b)}: requeued now it would wait for ever; nothing was ${verb === "retry" ? "retried" : "rerun"}`,
    {
      remediation:
        root === null
          ? `its chain of needs ends at a deleted job: add its command again (spoolctl show ${b.job_id} shows the command)`
          : root === b.need_id
            ? `retry job ${root}: that revives job ${b.job_id} with it (spoolctl retry ${root})`
            : `retry job ${root}, where the chain of needs failed: that revives job ${b.need_id} and job ${b.job_id} with it (spoolctl retry ${root})`,
      detail: { ...detail, ...(root !== b.need_id ? { retry: root } : {}) },
    },
  );
}

/** The `NEED_NOT_RETRIED` warning of a job `retry --all` left out because of a need. */
export function blockedWarningText(b: BlockedRetry): string {
  return b.need_state === "deleted"
    ? `job ${b.job_id} was not retried: it needs ${needWords(b)} before it succeeded, so it would wait for ever; add its command again (spoolctl show ${b.job_id})`
    : `job ${b.job_id} was not retried: it needs ${needWords(b)}; retry job ${b.need_id} and it is revived with it`;
}
