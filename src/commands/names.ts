/**
 * The verbs' names and one-line summaries, as plain data: what the root
 * `--help`, `brief` and `schema --verb` need, without loading a single verb.
 * src/commands/registry.ts pairs each name with its loader.
 */

/** Every verb, in the order of the root `--help`, with its summary. */
export const VERB_SUMMARIES = {
  add: "add a job: spoolctl add -- CMD ARGS…",
  work: "run jobs: loop, --once or --drain",
  status: "counts per state and lane, recent dead jobs",
  list: "jobs, newest first, with filters",
  show: "one job: fields, attempts and events",
  workers: "live and recently seen workers",
  stop: "ask workers to finish their running jobs and exit",
  output: "captured stdout/stderr of an attempt",
  wait: "block until jobs end; exit 6 if any ended dead or canceled",
  feedback: "one verdict about a job, with output tails and the next command",
  retry:
    "requeue dead or canceled jobs (--all with filters, --timeout/--max-retries/--env to change them, --force for running)",
  rerun: "run a finished job (done, dead, canceled) again as a new attempt",
  cancel: "cancel queued jobs; running ones with --running --yes",
  hold: "keep queued jobs from starting without canceling them (release lets them run)",
  release: "let held jobs run again",
  edit: "change a queued or held job's command or settings: edit ID -- CMD, or flags, or $EDITOR",
  priority: "set a queued or held job's priority: priority ID N (higher runs first)",
  triage: "at a terminal: walk through dead jobs and retry, change, delete or skip each",
  delete: "delete jobs that are not running, with their history and output (--yes)",
  pause: "pause a lane fleet-wide: no job of it starts (--for 30m, --reason)",
  resume: "end a lane's pause",
  "lane-list": "lanes: queued, running, slots, paused, live workers",
  "lane-set": "set a lane's fleet-wide ceiling of running jobs (--slots N|none)",
  prune: "delete old terminal jobs and their output (--dry-run / --yes)",
  events: "the job ledger: pages, --wait long-poll, --follow stream",
  "config-show": "where the queue is and why; queue-wide settings",
  "config-validate": "check .spoolctl/config.json without opening the queue",
  "config-get": "print one queue-wide setting",
  "config-set": "set a queue-wide setting (max-retries, timeout, backoff-base, backoff-cap)",
  "config-unset": "reset a queue-wide setting to its default",
  "schedule-add": "add a recurring job: --cron EXPR [--tz ZONE] or --every DURATION -- CMD",
  "schedule-list": "schedules: next slot, last job and its state",
  "schedule-rm": "delete a schedule (its jobs stay)",
  "schedule-pause": "pause a schedule",
  "schedule-resume": "resume a paused schedule from its next slot",
  "schedule-run-now": "add a schedule's job now, outside its slots",
  "schedule-tick": "fire the due slots of every schedule once and exit (for hosts without a worker)",
  "hook-add": "add an outcome hook: a job added when a matching job ends done, dead or canceled",
  "hook-list": "the outcome hooks",
  "hook-rm": "delete an outcome hook",
  "batch-seal": "seal a batch: no job joins it any more (wait --batch can end)",
  "batch-show": "one batch: counts by state, fail-fast, verdict",
  "batch-list": "batches with their counts and verdicts",
  doctor: "read-only readiness checks (exit 3 when not ready)",
  capabilities: "the machine-readable contract: verbs, flags, codes, limits, env",
  schema: "JSON Schemas of the envelope and each verb's data",
  brief: "compact usage text for agents",
  enqueue: 'QueueCTL add: enqueue \'{"id":"job1","command":"echo hi"}\'',
  report: "JUnit XML / markdown summary of jobs for CI",
  metrics: "Prometheus/OpenMetrics metrics of the queue, once or --serve ADDR",
  ui: "the queue in a browser: pages, triage, live output (127.0.0.1, with a token)",
  completion: "print a shell completion script: bash, zsh or fish",
} as const;

/** A verb's name. */
export type VerbName = keyof typeof VERB_SUMMARIES;

/** Every verb's name, in registry order. */
export const VERB_NAMES = Object.keys(VERB_SUMMARIES) as VerbName[];

/**
 * Two-word QueueCTL commands, rewritten to our verbs before parsing:
 * `worker start [--count N]` → `work --concurrency N`, `worker stop` → `stop`.
 * Each entry maps the arguments after the two words to a full argv.
 */
export const COMPOUND: Record<string, Record<string, (rest: string[]) => string[]>> = {
  worker: {
    start: (rest) => [
      "work",
      ...rest.map((a) =>
        a === "--count" ? "--concurrency" : a.startsWith("--count=") ? `--concurrency=${a.slice(8)}` : a,
      ),
    ],
    stop: (rest) => ["stop", ...rest],
  },
  // `config show|validate|get|set|unset` → the config-* verbs (QueueCTL: config set max-retries N).
  config: Object.fromEntries(
    ["show", "validate", "get", "set", "unset"].map((action) => [
      action,
      (rest: string[]) => [`config-${action}`, ...rest],
    ]),
  ),
  schedule: Object.fromEntries(
    ["add", "list", "rm", "pause", "resume", "run-now", "tick"].map((action) => [
      action,
      (rest: string[]) => [`schedule-${action}`, ...rest],
    ]),
  ),
  hook: Object.fromEntries(
    ["add", "list", "rm"].map((action) => [action, (rest: string[]) => [`hook-${action}`, ...rest]]),
  ),
  // Batches with one verdict: `batch seal|show|list` → the batch-* verbs.
  batch: Object.fromEntries(
    ["seal", "show", "list"].map((action) => [action, (rest: string[]) => [`batch-${action}`, ...rest]]),
  ),
  // `lane list|set|pause|resume` → lane-list, lane-set, pause, resume.
  lane: {
    list: (rest) => ["lane-list", ...rest],
    set: (rest) => ["lane-set", ...rest],
    pause: (rest) => ["pause", ...rest],
    resume: (rest) => ["resume", ...rest],
  },
  // QueueCTL's dead-letter queue: `dlq list` = list --state dead, `dlq retry ID` = retry ID.
  dlq: {
    list: (rest) => ["list", "--state", "dead", ...rest],
    retry: (rest) => ["retry", ...rest],
  },
};
