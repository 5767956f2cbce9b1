/**
 * Jobs through the real CLI: add one or many, drain, and a job that blocks
 * until the test lets it go. Queue state is read through TempQueue (the
 * driver); test-only shortcuts are in queue-fixtures.ts.
 */
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAST_KNOBS, type TempQueue } from "./temp-queue.ts";

/** `add --json ARGS` → the new job's id. */
export async function addJob(q: TempQueue, ...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  if (r.code !== 0) throw new Error(`add failed (${r.code}): ${r.stdout}${r.stderr}`);
  return r.json.data.job_id as number;
}

/** Runs `work --drain` and expects it to succeed. */
export async function drain(q: TempQueue, ...args: string[]): Promise<void> {
  const r = await q.run(["work", "--drain", ...args], { env: FAST_KNOBS });
  expect(r.code).toBe(0);
}

/**
 * The argv of a job that runs until `release()` creates its gate file; it
 * writes its pid to `pidfile` first. Returns the argv and the release function.
 * It also ends when the queue's folder is gone, so a job a test left running
 * (claimed by a worker killed before its first heartbeat) cannot outlive it.
 */
export function gatedJob(q: TempQueue, name: string): { argv: string[]; release(): void; pid(): number | null } {
  const gate = join(q.dir, `${name}.go`);
  const pidfile = join(q.dir, `${name}.pid`);
  return {
    argv: [
      "sh",
      "-c",
      `echo $$ > '${pidfile}'; while [ ! -f '${gate}' ] && [ -d '${q.dir}' ]; do sleep 0.05; done; echo released`,
    ],
    release: () => writeFileSync(gate, "go"),
    pid: () =>
      existsSync(pidfile) && readFileSync(pidfile, "utf8").trim() ? Number(readFileSync(pidfile, "utf8").trim()) : null,
  };
}

/** `add --json …`, returning the job id. */
export async function add(q: TempQueue, ...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  if (r.code !== 0) throw new Error(`add failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  return r.json.data.job_id as number;
}

/** `add --from -` with one NDJSON line per spec; returns the ids. */
export async function addMany(q: TempQueue, specs: object[]): Promise<number[]> {
  const r = await q.run(["add", "--from", "-", "--json"], {
    stdin: `${specs.map((s) => JSON.stringify(s)).join("\n")}\n`,
  });
  if (r.code !== 0) throw new Error(`add --from failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  return idsOf(r.json.data);
}

function idsOf(data: any): number[] {
  const list: any[] = Array.isArray(data) ? data : (data.jobs ?? data.added ?? data.results ?? []);
  const ids = list.map((x) => (typeof x === "number" ? x : (x.job_id ?? x.id)));
  if (!ids.length || ids.some((id) => typeof id !== "number"))
    throw new Error(`cannot read job ids from add --from: ${JSON.stringify(data).slice(0, 300)}`);
  return ids;
}
