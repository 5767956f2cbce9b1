/**
 * `spoolctl brief`: a compact usage text to put in an agent's context. The
 * verb names are given by the caller (the registry); the rest is the workflow.
 */
import { ERROR_CODES } from "../contract/errors.ts";
import type { BriefData } from "./schemas-operator.ts";

/** The token budget the brief is written to stay under. */
const BRIEF_BUDGET_TOKENS = 900;

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { BriefData };

/** Builds the brief for the given verb names (sorted in the text). */
export function buildBrief(verbNames: string[]): BriefData {
  const lines = [
    "spoolctl brief: a daemonless, crash-safe job queue for shell commands; one SQLite file is the queue.",
    `Verbs: ${[...verbNames].sort().join(", ")}. QueueCTL forms: enqueue JSON, worker start|stop, dlq list|retry, config set max-retries N; batch seal|show|list.`,
    "States: queued, running, done, dead, canceled (failed is reserved, always 0). Scheduled = queued with a future next_run_at; held = queued, kept from starting by hold.",
    "JSON: every verb takes --json and prints one envelope {ok, tool_version, data, meta, warnings, commands, errors}; ok is true iff errors is empty.",
    "Queue path: --db PATH > SPOOLCTL_DB > .spoolctl/config.json db_path > ./.spoolctl/queue.db.",
    "Loop: spoolctl add -- CMD ARGS (argv verbatim, no shell; -c 'STRING' for sh -c); spoolctl work --drain; spoolctl wait ID...; spoolctl feedback ID.",
    "wait exits 0 when every job is done, 6 (ok:true, all_succeeded:false) when any ended dead or canceled, 4 TIMEOUT after --timeout.",
    "feedback ID: terminal, succeeded (null while in flight), exit_code, failure_reason, output tails (--tail-bytes N) and remediation = the next command.",
    "add: --timeout, --max-retries, --max-crashes, --priority, --queue, --after/--at, --cwd, --env K=V, --tag K=V, --note, --key (idempotency: an active job with the same key is reused).",
    "Batches: add --batch NAME (--from seals it; else --seal on the last add or batch seal NAME) --fail-fast[=now]; wait --batch NAME (0/6 for the whole batch); output --follow --all --batch NAME; report/list/retry --all --batch NAME.",
    "Inspect: status, list (--state, --queue, --tag, --limit, --cursor), show ID, output ID (--attempt N, --stream), events (--since-id cursor, --wait, --follow NDJSON).",
    "Fix: retry ID... or retry --all --state dead (--force for running); rerun ID runs a finished (also done) job again; cancel ID (--running --yes for running); delete ID... --yes removes jobs that are not running; prune --older-than 7d --dry-run, then --yes.",
    "Before a job starts: hold ID.../release ID... (ids, ranges 3-10, or --all with filters); edit ID -- CMD or --priority/--queue/--timeout/--max-retries/--env/--cwd/--after; priority ID N. A started job is CONFLICT (exit 5).",
    "Failures: list --state dead --group (groups by reason, exit code, masked last stderr line, with job ids); filter list and retry --all by --since 1h, --failure-reason timeout, --match 'GLOB'; retry --all --dry-run previews.",
    "Lanes: lane list; pause LANE [--for 30m] [--reason T] / resume LANE (fleet-wide, durable); lane set LANE --slots N|none; work --queue a,b or --all-lanes.",
    "Settings: config set max-retries|timeout|backoff-base|backoff-cap VALUE (stored in the queue); config show explains the path; doctor checks readiness (exit 3 when not ready).",
    `Exit codes: 0 ok, 1 input (${codesFor(1)}), 2 SAFETY_BLOCK (add the confirmation flag), 3 environment, 4 LOCKED/TIMEOUT (retry later), 5 conflict, 6 awaited job failed.`,
    "Contract: capabilities --json (verbs, flags, limits, env), schema --json (JSON Schemas).",
  ];
  const text = lines.join("\n");
  return { text, approx_tokens: Math.ceil(text.length / 4), budget_tokens: BRIEF_BUDGET_TOKENS };
}

function codesFor(exit: number): string {
  return Object.entries(ERROR_CODES)
    .filter(([, info]) => info.exit_code === exit)
    .map(([code]) => code)
    .join(", ");
}
