/**
 * The job state machine, written down once (docs/architecture.md "Job states"). Operations check a
 * transition here before they ask the store to make it.
 */
import type { JobState } from "../model/job.ts";

/** Every allowed transition, with the operation that makes it. */
const TRANSITIONS: Readonly<Record<JobState, Partial<Record<JobState, string>>>> = {
  queued: { running: "claim", canceled: "cancel" },
  running: {
    done: "attempt succeeded",
    queued: "attempt failed with budget left, worker reaped, worker interrupted (requeue), or retry --force",
    dead: "budget exhausted",
    canceled: "cancel --running",
  },
  dead: { queued: "retry" },
  canceled: { queued: "retry" },
  done: {},
};

/** Whether `from → to` is allowed. */
export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from][to] !== undefined;
}

/** Whether a state is terminal (the job will not run again unless retried). */
export function isTerminal(state: JobState): boolean {
  return state === "done" || state === "dead" || state === "canceled";
}
