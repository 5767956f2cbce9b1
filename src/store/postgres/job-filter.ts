/**
 * The WHERE clause of a {@link JobFilter} for the PostgreSQL driver, shared by
 * `listJobs` and `failureGroups` (as the SQLite driver's job-filter.ts).
 * Columns are qualified with `jobs.`, so the clause also works in a statement
 * that joins `attempts`.
 */
import type { JobFilter } from "../../model/job.ts";

/** Adds a parameter and returns its placeholder (`$n`). */
export type Param = (v: unknown) => string;

/** The command line matched by `commandGlob`: argv joined by single spaces. */
const COMMAND_LINE =
  "(SELECT string_agg(e, ' ' ORDER BY n) FROM json_array_elements_text(jobs.argv::json) WITH ORDINALITY AS t(e, n))";

/**
 * A shell glob as an anchored POSIX regular expression (`*` any run, `?` one
 * character, `[…]`/`[!…]` a class), matching as SQLite's GLOB does; every
 * other character stands for itself.
 */
function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, close);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      out += `[${negated ? "^" : ""}${body.replace(/[\\\]]/g, (x) => `\\${x}`)}]`;
      i = close;
    } else out += /[\\^$.|+(){}\]]/.test(c) ? `\\${c}` : c;
  }
  return `^${out}$`;
}

/**
 * A `list --tag k=v` condition. Tags are stored as JSON text; jsonb
 * containment matches the pair exactly, but jsonb refuses the escape \u0000
 * (a NUL byte), so rows (and filters) holding one are matched on the
 * serialized pair instead: `"k":"v"` as JSON.stringify writes it. (The
 * parameter is cast from text: a parameter typed json(b) is JSON-encoded again by Bun.)
 */
function tagMatch(key: string, value: string, p: Param): string {
  const pair = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  const textual = `(strpos(jobs.tags, ${p(`${pair},`)}) > 0 OR strpos(jobs.tags, ${p(`${pair}}`)}) > 0)`;
  if (pair.includes("\\u0000")) return textual;
  return `(CASE WHEN strpos(jobs.tags, '\\u0000') > 0 THEN ${textual} ELSE jobs.tags::jsonb @> (${p(`{${pair}}`)}::text)::jsonb END)`;
}

/** `sql` with ASCII capitals folded to small letters only, as SQLite's lower() does: both stores match the same jobs. */
function asciiLower(sql: string): string {
  return `translate(${sql}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
}

/** `filter` (without `limit`) as SQL conditions, parameters added through `p`; "true" when it selects everything. */
export function jobWhere(filter: Omit<JobFilter, "limit">, p: Param): string {
  const where: string[] = [];
  if (filter.states?.length) where.push(`jobs.state = ANY(${p(filter.states)}::text[])`);
  if (filter.queue !== undefined) where.push(`jobs.queue = ${p(filter.queue)}`);
  for (const [k, v] of Object.entries(filter.tags ?? {})) where.push(tagMatch(k, v, p));
  if (filter.priorityMin !== undefined) where.push(`jobs.priority >= ${p(filter.priorityMin)}`);
  if (filter.beforeId !== undefined) where.push(`jobs.id < ${p(filter.beforeId)}`);
  if (filter.afterId !== undefined) where.push(`jobs.id > ${p(filter.afterId)}`);
  if (filter.batch !== undefined) where.push(`jobs.batch = ${p(filter.batch)}`);
  if (filter.failureGroup !== undefined)
    where.push(`jobs.id IN (SELECT job_id FROM dead_jobs WHERE gkey = ${p(filter.failureGroup)})`);
  if (filter.held !== undefined) where.push(filter.held ? "jobs.held" : "NOT jobs.held");
  if (filter.ids !== undefined) where.push(`jobs.id = ANY(${p(filter.ids)}::bigint[])`);
  if (filter.createdSince !== undefined) where.push(`jobs.created_at >= ${p(filter.createdSince)}`);
  if (filter.runAfter !== undefined) where.push(`jobs.next_run_at > ${p(filter.runAfter)}`);
  if (filter.finishedSince !== undefined) where.push(`jobs.finished_at >= ${p(filter.finishedSince)}::float8`);
  if (filter.failureReasons !== undefined) {
    where.push(`coalesce((SELECT fa.failure_reason FROM attempts fa WHERE fa.job_id = jobs.id AND fa.attempt_no = jobs.last_attempt_no),
      CASE WHEN jobs.state = 'canceled' THEN 'canceled' END) = ANY(${p(filter.failureReasons)}::text[])`);
  }
  if (filter.text !== undefined) {
    const lastLine = `(SELECT sa.stderr_last_line FROM attempts sa WHERE sa.job_id = jobs.id AND sa.attempt_no = jobs.last_attempt_no)`;
    const haystack = `${COMMAND_LINE} || chr(10) || coalesce(jobs.idempotency_key, '') || chr(10) || coalesce(jobs.name, '') || chr(10) || coalesce(jobs.last_error, '') || chr(10) || coalesce(${lastLine}, '')`;
    where.push(`strpos(${asciiLower(haystack)}, ${asciiLower(`${p(filter.text)}::text`)}) > 0`);
  }
  if (filter.commandGlob !== undefined) where.push(`${COMMAND_LINE} ~ ${p(globToRegex(filter.commandGlob))}`);
  return where.length ? where.join(" AND ") : "true";
}
