/**
 * The WHERE clause of a {@link JobFilter} for the SQLite driver, shared by
 * `listJobs` and `failureGroups` so `list`, `retry --all` and `triage` select
 * the same jobs. Columns are qualified with `jobs.`, so the clause also
 * works in a statement that joins `attempts`.
 */
import type { JobFilter } from "../../model/job.ts";

/** The effective failure reason of a job: its last attempt's, or `canceled` for a job canceled before it ran. */
const JOB_FAILURE_REASON = `coalesce(
  (SELECT fa.failure_reason FROM attempts fa WHERE fa.job_id = jobs.id AND fa.attempt_no = jobs.last_attempt_no),
  CASE WHEN jobs.state = 'canceled' THEN 'canceled' END)`;

/** The command line matched by `commandGlob`: argv joined by single spaces. */
const COMMAND_LINE = "(SELECT group_concat(value, ' ') FROM (SELECT value FROM json_each(jobs.argv) ORDER BY key))";

/** The last stderr line of the job's latest attempt: with `last_error`, what `--search` reads as the job's last error. */
const LAST_STDERR_LINE =
  "(SELECT sa.stderr_last_line FROM attempts sa WHERE sa.job_id = jobs.id AND sa.attempt_no = jobs.last_attempt_no)";

/** `filter` (without `limit`) as SQL conditions and their parameters; "1" when it selects everything. */
export function jobWhere(filter: Omit<JobFilter, "limit">): { sql: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  const list = (values: readonly (string | number)[]) => {
    params.push(JSON.stringify(values));
    return "(SELECT value FROM json_each(?))";
  };
  if (filter.states?.length) {
    // Placeholders, not json_each: the planner then uses the (state, id) index.
    where.push(`jobs.state IN (${filter.states.map(() => "?").join(",")})`);
    params.push(...filter.states);
  }
  if (filter.queue !== undefined) {
    where.push("jobs.queue = ?");
    params.push(filter.queue);
  }
  for (const [k, v] of Object.entries(filter.tags ?? {})) {
    // json_each, not a JSON path: any key (quotes, NUL bytes …) matches exactly, and never fails as a bad path.
    where.push("EXISTS (SELECT 1 FROM json_each(jobs.tags) WHERE json_each.key = ? AND json_each.value = ?)");
    params.push(k, v);
  }
  const compare = (column: string, op: string, value: number | undefined) => {
    if (value === undefined) return;
    where.push(`jobs.${column} ${op} ?`);
    params.push(value);
  };
  compare("priority", ">=", filter.priorityMin);
  compare("id", "<", filter.beforeId);
  compare("id", ">", filter.afterId);
  if (filter.failureGroup !== undefined) {
    where.push("jobs.id IN (SELECT job_id FROM dead_jobs WHERE gkey = ?)");
    params.push(filter.failureGroup);
  }
  if (filter.batch !== undefined) {
    where.push("jobs.batch = ?");
    params.push(filter.batch);
  }
  if (filter.held !== undefined) where.push(filter.held ? "jobs.held = 1" : "jobs.held = 0");
  compare("created_at", ">=", filter.createdSince);
  compare("next_run_at", ">", filter.runAfter);
  compare("finished_at", ">=", filter.finishedSince);
  if (filter.ids !== undefined) where.push(`jobs.id IN ${list(filter.ids)}`);
  if (filter.failureReasons !== undefined) where.push(`${JOB_FAILURE_REASON} IN ${list(filter.failureReasons)}`);
  if (filter.text !== undefined) {
    // instr, not LIKE: the text is taken literally (no % or _ to escape); lower() folds ASCII only, as the PostgreSQL driver does.
    where.push(
      `instr(lower(${COMMAND_LINE} || char(10) || coalesce(jobs.idempotency_key, '') || char(10) || coalesce(jobs.name, '') || char(10) || coalesce(jobs.last_error, '') || char(10) || coalesce(${LAST_STDERR_LINE}, '')), lower(?)) > 0`,
    );
    params.push(filter.text);
  }
  if (filter.commandGlob !== undefined) {
    where.push(`${COMMAND_LINE} GLOB ?`);
    // SQLite's GLOB negates a class with ^; the shell (and the PostgreSQL driver) with ! as well.
    params.push(filter.commandGlob.replace(/\[!/g, "[^"));
  }
  return { sql: where.length ? where.join(" AND ") : "1", params };
}
