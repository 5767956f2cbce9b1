/**
 * The verb table: name → lazy loader, so that a simple verb imports only what it
 * uses (SPEC §9: the CLI must start fast).
 */
import type { Verb } from "./verb.ts";

type Loader = () => Promise<Verb<any>>;

/** Verbs by name, with a one-line summary for the root `--help`. */
export const VERBS: Record<string, { summary: string; load: Loader }> = {
  add: { summary: "add a job: spoolctl add -- CMD ARGS…", load: async () => (await import("./add.ts")).default },
  work: { summary: "run jobs: loop, --once or --drain", load: async () => (await import("./work.ts")).default },
  status: { summary: "counts per state and lane, recent dead jobs", load: async () => (await import("./status.ts")).default },
  list: { summary: "jobs, newest first, with filters", load: async () => (await import("./list.ts")).default },
  show: { summary: "one job: fields, attempts and events", load: async () => (await import("./show.ts")).default },
  workers: { summary: "live and recently seen workers", load: async () => (await import("./workers.ts")).default },
  stop: { summary: "ask workers to finish their running jobs and exit", load: async () => (await import("./stop.ts")).default },
  output: { summary: "captured stdout/stderr of an attempt", load: async () => (await import("./output.ts")).default },
};

/** Alternative spellings → verb name. */
export const ALIASES: Record<string, string> = {};

/**
 * Two-word QueueCTL commands (SPEC §5), rewritten to our verbs before parsing:
 * `worker start [--count N]` → `work --concurrency N`, `worker stop` → `stop`.
 * Each entry maps the arguments after the two words to a full argv.
 */
export const COMPOUND: Record<string, Record<string, (rest: string[]) => string[]>> = {
  worker: {
    start: (rest) => ["work", ...rest.map((a) => (a === "--count" ? "--concurrency" : a.startsWith("--count=") ? `--concurrency=${a.slice(8)}` : a))],
    stop: (rest) => ["stop", ...rest],
  },
};
