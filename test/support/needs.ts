/**
 * Shared checks of the dependency tests (test/needs*.test.ts): a graph of
 * `add --from` lines with refs, the edges it makes, and the ledger and run-log
 * rules every edge must obey.
 */

import type { LoggedRun } from "./run-log.ts";
import type { QueueSnapshot } from "./temp-queue.ts";

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random graph of `n` jobs (index 0 … n-1, job id = index + 1 in a fresh
 * queue): job i needs 0–3 random earlier jobs, with fan-in (every 50th job
 * needs the 8 before it) and fan-out (the first 5 jobs are needed by many).
 * Returns each job's needs (indexes).
 */
export function randomGraph(n: number, random: () => number): number[][] {
  return Array.from({ length: n }, (_, i) => {
    if (i === 0) return [];
    if (i % 50 === 49) return Array.from({ length: Math.min(8, i) }, (_, k) => i - 1 - k);
    const wanted = new Set<number>();
    const k = Math.floor(random() * 4);
    for (let j = 0; j < k; j++)
      wanted.add(random() < 0.3 ? Math.floor(random() * Math.min(5, i)) : Math.floor(random() * i));
    return [...wanted].sort((a, b) => a - b);
  });
}

/** The `--from` lines of a graph: line i is `{"ref": "j<i>", "needs": [...], "argv": argv(i)}`. */
export function graphLines(needs: number[][], argv: (i: number) => string[]): string {
  return `${needs
    .map((ns, i) =>
      JSON.stringify({ ref: `j${i}`, ...(ns.length ? { needs: ns.map((n) => `j${n}`) } : {}), argv: argv(i) }),
    )
    .join("\n")}\n`;
}

/**
 * Edges the ledger contradicts: a dependent claimed before (in commit order:
 * ledger ids) its need's `succeeded` row, or a need without one. `ids[i]` is
 * the job of index i.
 */
export function ledgerViolations(snap: QueueSnapshot, needs: number[][], ids: number[]): string[] {
  const first = (jobId: number, event: string) =>
    snap.events.filter((e) => e.job_id === jobId && e.event === event).map((e) => e.id)[0];
  const lastSuccess = (jobId: number) =>
    snap.events
      .filter((e) => e.job_id === jobId && e.event === "succeeded")
      .map((e) => e.id)
      .at(-1);
  const out: string[] = [];
  needs.forEach((ns, i) => {
    const claimed = first(ids[i]!, "claimed");
    for (const n of ns) {
      const succeeded = lastSuccess(ids[n]!);
      if (succeeded === undefined) out.push(`job ${ids[i]} ran but its need ${ids[n]} never succeeded`);
      else if (claimed !== undefined && claimed < succeeded)
        out.push(`job ${ids[i]} claimed (event ${claimed}) before its need ${ids[n]} succeeded (event ${succeeded})`);
    }
  });
  return out;
}

/** Edges the run log contradicts: a run of a dependent that started before its need's last run ended. */
export function runLogViolations(runs: LoggedRun[], needs: number[][], ids: number[]): string[] {
  const byJob = new Map<number, LoggedRun[]>();
  for (const r of runs) byJob.set(r.job, [...(byJob.get(r.job) ?? []), r]);
  const out: string[] = [];
  needs.forEach((ns, i) => {
    for (const run of byJob.get(ids[i]!) ?? [])
      for (const n of ns) {
        const ended = (byJob.get(ids[n]!) ?? []).filter((r) => r.endLine !== null).map((r) => r.endLine!);
        if (ended.length === 0 || run.startLine < Math.max(...ended))
          out.push(`job ${ids[i]} started (log line ${run.startLine}) before its need ${ids[n]} ended its run`);
      }
  });
  return out;
}

/** Seconds from each need's `succeeded` row to its dependent's first `claimed` row (the last need, per dependent). */
export function handoffSeconds(snap: QueueSnapshot, needs: number[][], ids: number[]): number[] {
  const at = (jobId: number, event: string) => snap.events.find((e) => e.job_id === jobId && e.event === event)?.at;
  const out: number[] = [];
  needs.forEach((ns, i) => {
    if (ns.length === 0) return;
    const claimed = at(ids[i]!, "claimed");
    const ready = Math.max(...ns.map((n) => at(ids[n]!, "succeeded") ?? Number.NaN));
    if (claimed !== undefined && Number.isFinite(ready)) out.push(claimed - ready);
  });
  return out;
}

/** Median and 95th percentile of `xs`, in milliseconds, rounded. */
export function summary(xs: number[]): { n: number; median_ms: number; p95_ms: number; max_ms: number } {
  const s = [...xs].sort((a, b) => a - b);
  const pick = (q: number) => Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0) * 1000);
  return { n: s.length, median_ms: pick(0.5), p95_ms: pick(0.95), max_ms: Math.round((s.at(-1) ?? 0) * 1000) };
}
