/**
 * Jobs that tell when two runs of one job overlap (test/stopped-worker-pg.test.ts,
 * test/shared-volume.test.ts): each run takes a lock of its job's own with
 * `flock -n` (a run that finds it held logs `overlap`) and logs a timestamped
 * tick every 50 ms, so two runs ticking at the same time are seen too.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The jobs added and the two logs they write. */
export interface GuardedJobs {
  ids: number[];
  ticks: string;
  overlaps: string;
}

/**
 * Adds `n` guarded jobs through `add` (the job's argv; resolves with its id),
 * their locks and logs in `dir` named by `tag`. A run ticks for five minutes
 * (longer than any reap takes) where the shell test `longWhen` holds (by
 * default on host `host-a`), for half a second anywhere else.
 */
export async function addGuardedJobs(
  add: (argv: string[]) => Promise<number>,
  dir: string,
  tag: string,
  n: number,
  longWhen = '[ "$(hostname)" = host-a ]',
): Promise<GuardedJobs> {
  const ticks = join(dir, `ticks-${tag}.log`);
  const overlaps = join(dir, `overlaps-${tag}.log`);
  writeFileSync(ticks, "");
  writeFileSync(overlaps, "");
  const ids: number[] = [];
  for (let j = 0; j < n; j++) {
    const body = `n=10; ${longWhen} && n=6000; i=0; while [ $i -lt $n ]; do echo "${j} $SPOOLCTL_ATTEMPT_TOKEN $(hostname) $(date +%s%N)" >> ${ticks}; sleep 0.05; i=$((i+1)); done`;
    const script = `flock -n ${join(dir, `lock-${tag}-${j}`)} sh -c '${body}' || echo "overlap ${j} $(hostname)" >> ${overlaps}`;
    ids.push(await add(["sh", "-c", script]));
  }
  return { ids, ticks, overlaps };
}

/**
 * The overlapping runs found in the logs: runs that found their job's lock
 * held, plus pairs of attempts of one job whose first-to-last tick spans
 * intersect (two runs ticking at the same time).
 */
export function overlapsIn(logs: Pick<GuardedJobs, "ticks" | "overlaps">): string[] {
  const found = readFileSync(logs.overlaps, "utf8").trim().split("\n").filter(Boolean);
  const spans = new Map<string, { job: string; from: bigint; to: bigint }>();
  for (const line of readFileSync(logs.ticks, "utf8").trim().split("\n").filter(Boolean)) {
    const [j, token, , ns] = line.split(" ");
    const at = BigInt(ns!);
    const span = spans.get(token!) ?? { job: j!, from: at, to: at };
    if (at < span.from) span.from = at;
    if (at > span.to) span.to = at;
    spans.set(token!, span);
  }
  const list = [...spans.entries()];
  for (const [i, [ta, a]] of list.entries())
    for (const [tb, b] of list.slice(i + 1))
      if (a.job === b.job && a.from <= b.to && b.from <= a.to) found.push(`ticks of ${ta} and ${tb} interleave`);
  return found;
}

/** How many attempts of the jobs ticked on `host` (from the tick log). */
export function ticking(ticks: string, host: string): number {
  const tokens = readFileSync(ticks, "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[2] === host)
    .map((l) => l.split(" ")[1]);
  return new Set(tokens).size;
}
