/**
 * The run log of the concurrency tests: a job script that appends `start` and
 * `end` lines under `flock`, and the readers that turn the log into runs (to
 * check order, overlap and parallelism without timing assumptions).
 */

/**
 * A job script that records its run in a shared log, each line appended under
 * `flock` so the log's order is the order in which the lines were written:
 * `start JOB PID TIME` when it begins, `end JOB PID TIME` when it is done
 * (TIME from bash's $EPOCHREALTIME; PID is the job's own process, which leads
 * its process group). The lock is taken by `flock` on fd 9 and released by
 * closing it (two execs per run rather than four: spawning is the cost here).
 * A run killed by a signal writes no end line.
 * argv: bash SCRIPT JOB SLEEP LOG LOCK
 */
export const RUN_LOGGER = `exec 9>>"$4"; flock 9; echo "start $1 $$ $EPOCHREALTIME" >> "$3"; exec 9>&-
[ "$2" = 0 ] || sleep "$2"
exec 9>>"$4"; flock 9; echo "end $1 $$ $EPOCHREALTIME" >> "$3"; exec 9>&-
`;

/** One run of a job as the log saw it; `end` null when it never wrote its end line. */
export interface LoggedRun {
  job: number;
  pid: number;
  start: number;
  startLine: number;
  end: number | null;
  endLine: number | null;
}

/** Parses the run log; `problems` lists lines that make no sense (an end without a start, a second start). */
export function parseRunLog(text: string): { runs: LoggedRun[]; problems: string[] } {
  const runs: LoggedRun[] = [];
  const open = new Map<string, LoggedRun>();
  const problems: string[] = [];
  text.split("\n").forEach((line, index) => {
    if (line === "") return;
    const m = /^(start|end) (\d+) (\d+) (\d+(?:\.\d+)?)$/.exec(line);
    if (!m) {
      problems.push(`line ${index + 1} is malformed: ${JSON.stringify(line)}`);
      return;
    }
    const [, kind, job, pid, time] = m;
    const key = `${job}/${pid}`;
    if (kind === "start") {
      if (open.has(key)) problems.push(`line ${index + 1}: job ${job} pid ${pid} started twice`);
      const run: LoggedRun = {
        job: Number(job),
        pid: Number(pid),
        start: Number(time),
        startLine: index,
        end: null,
        endLine: null,
      };
      open.set(key, run);
      runs.push(run);
    } else {
      const run = open.get(key);
      if (!run) problems.push(`line ${index + 1}: job ${job} pid ${pid} ended without starting`);
      else {
        run.end = Number(time);
        run.endLine = index;
        open.delete(key);
      }
    }
  });
  return { runs, problems };
}

/** Runs grouped by job, in log order. */
export function runsByJob(runs: LoggedRun[]): Map<number, LoggedRun[]> {
  const by = new Map<number, LoggedRun[]>();
  for (const run of runs) by.set(run.job, [...(by.get(run.job) ?? []), run]);
  return by;
}

/** The greatest number of runs (of any jobs) open at once in the log. */
export function maxParallel(runs: LoggedRun[]): number {
  const deltas: [number, number][] = [];
  for (const r of runs) {
    deltas.push([r.startLine, 1]);
    if (r.endLine !== null) deltas.push([r.endLine, -1]);
  }
  deltas.sort((a, b) => a[0] - b[0]);
  let now = 0;
  let max = 0;
  for (const [, d] of deltas) max = Math.max(max, (now += d));
  return max;
}
