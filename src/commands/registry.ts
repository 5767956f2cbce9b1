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
  wait: { summary: "block until jobs end; exit 6 if any ended dead or canceled", load: async () => (await import("./wait.ts")).default },
  feedback: { summary: "one verdict about a job, with output tails and the next command", load: async () => (await import("./feedback.ts")).default },
  retry: { summary: "requeue dead or canceled jobs (--all with filters, --force for running)", load: async () => (await import("./retry.ts")).default },
  cancel: { summary: "cancel queued jobs; running ones with --running --yes", load: async () => (await import("./cancel.ts")).default },
  triage: { summary: "at a terminal: walk through dead jobs and retry, change, delete or skip each", load: async () => (await import("./triage.ts")).default },
  prune: { summary: "delete old terminal jobs and their output (--dry-run / --yes)", load: async () => (await import("./prune.ts")).default },
  events: { summary: "the job ledger: pages, --wait long-poll, --follow stream", load: async () => (await import("./events.ts")).default },
  "config-show": { summary: "where the queue is and why; queue-wide settings", load: async () => (await import("./config.ts")).show },
  "config-validate": { summary: "check .spoolctl/config.json without opening the queue", load: async () => (await import("./config.ts")).validate },
  "config-get": { summary: "print one queue-wide setting", load: async () => (await import("./config.ts")).get },
  "config-set": { summary: "set a queue-wide setting (max-retries, timeout, backoff-base, backoff-cap)", load: async () => (await import("./config.ts")).set },
  "config-unset": { summary: "reset a queue-wide setting to its default", load: async () => (await import("./config.ts")).unset },
  doctor: { summary: "read-only readiness checks (exit 3 when not ready)", load: async () => (await import("./doctor.ts")).default },
  capabilities: { summary: "the machine-readable contract: verbs, flags, codes, limits, env", load: async () => (await import("./capabilities.ts")).default },
  schema: { summary: "JSON Schemas of the envelope and each verb's data", load: async () => (await import("./schema.ts")).default },
  brief: { summary: "compact usage text for agents", load: async () => (await import("./brief.ts")).default },
  enqueue: { summary: "QueueCTL add: enqueue '{\"id\":\"job1\",\"command\":\"echo hi\"}'", load: async () => (await import("./enqueue.ts")).default },
  report: { summary: "JUnit XML / markdown summary of jobs for CI", load: async () => (await import("./report.ts")).default },
  completion: { summary: "print a shell completion script: bash, zsh or fish", load: async () => (await import("./completion.ts")).default },
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
  // `config show|validate|get|set|unset` → the config-* verbs (QueueCTL: config set max-retries N).
  config: Object.fromEntries(["show", "validate", "get", "set", "unset"].map((action) => [action, (rest: string[]) => [`config-${action}`, ...rest]])),
  // QueueCTL's dead-letter queue: `dlq list` = list --state dead, `dlq retry ID` = retry ID.
  dlq: {
    list: (rest) => ["list", "--state", "dead", ...rest],
    retry: (rest) => ["retry", ...rest],
  },
};
