/**
 * task-spooler (`tsp`, Debian's name for `ts`) and `nq`, measured the same way
 * as spoolctl where they apply: drain throughput of N trivial jobs and
 * add→start latency of an idle queue. Both are optional: when a program is not
 * installed, its rows say so.
 *
 * Drain throughput needs the N jobs queued before the clock starts. Neither
 * tool has a pause, so a gate job that waits for a file is queued first, then
 * N `true` jobs; the clock starts when the gate file is created and stops when
 * the last job has finished.
 *
 * Both tools keep one process per queued job (tsp: a client connected to the
 * server; nq: a forked process waiting on the lock of every earlier job), so
 * N is kept ≤ 300 for them (tsp's server stops accepting clients near 1000, and
 * queueing hundreds of nq processes is slow).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { onAbort, run, sleep, tempDir, waitFor, wallMs, writeFile } from "./lib.ts";

/** On interruption: open the gate (so queued jobs finish) and stop the tsp server. */
function guardTsp(env: Record<string, string>, gate?: string): () => void {
  return onAbort(() => {
    if (gate) Bun.spawnSync(["sh", "-c", `: > "${gate}"`]);
    Bun.spawnSync(["sh", "-c", `"${TSP}" -K 2>/dev/null; true`], {
      env: { ...process.env, ...env },
      stdout: "ignore",
      stderr: "ignore",
    });
  });
}

export const TSP = Bun.which("tsp") ?? Bun.which("ts");
export const NQ = Bun.which("nq");

/** Whether `ts` is task-spooler and not moreutils' `ts` (timestamp filter). */
export function tspUsable(): boolean {
  if (!TSP) return false;
  const r = Bun.spawnSync([TSP, "-h"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, TS_SOCKET: "/nonexistent/x" },
  });
  return (
    /task spooler|usage/i.test(r.stdout.toString() + r.stderr.toString()) && !/moreutils/i.test(r.stdout.toString())
  );
}

/** Runs a shell script; stdio is not piped (background job processes must not hold our pipes). */
function sh(script: string, env: Record<string, string>): Promise<Awaited<ReturnType<typeof run>>> {
  return run(["sh", "-c", script], { env, quiet: true });
}

export interface DrainResult {
  ms: number;
  jobs: number;
}

/** tsp: gate, N `true` jobs with 1 slot, then `-S slots`, open the gate, wait for the last job. */
export async function tspDrain(n: number, slots: number): Promise<DrainResult> {
  const dir = tempDir("tsp");
  const env = { TS_SOCKET: join(dir, "socket"), TMPDIR: dir, TS_MAXFINISHED: String(n + 10) };
  const gate = join(dir, "GO");
  const unguard = guardTsp(env, gate);
  try {
    await sh(`"${TSP}" -S 1 >/dev/null`, env);
    await sh(`"${TSP}" sh -c 'while [ ! -e "${gate}" ]; do sleep 0.005; done' >/dev/null`, env);
    const add = await sh(`i=0; while [ $i -lt ${n} ]; do "${TSP}" true >/dev/null || exit 1; i=$((i+1)); done`, env);
    if (add.code !== 0) throw new Error(`tsp add failed (exit ${add.code})`);
    const t0 = performance.now();
    await sh(`"${TSP}" -S ${slots}; : > "${gate}"`, env);
    // -w without an id waits for the last job; then make sure nothing is left running.
    await sh(`"${TSP}" -w >/dev/null 2>&1; true`, env);
    await waitFor(
      () => {
        const l = Bun.spawnSync(["sh", "-c", `"${TSP}" -l`], {
          env: { ...process.env, ...env },
          stdout: "pipe",
        }).stdout.toString();
        return !/\b(running|queued)\b/.test(l);
      },
      120_000,
      5,
      "tsp to finish",
    );
    const ms = performance.now() - t0;
    const list = Bun.spawnSync(["sh", "-c", `"${TSP}" -l`], {
      env: { ...process.env, ...env },
      stdout: "pipe",
    }).stdout.toString();
    const finished = (list.match(/\bfinished\b/g) ?? []).length;
    if (finished < n + 1) throw new Error(`tsp: only ${finished} of ${n + 1} jobs finished`);
    return { ms, jobs: n };
  } finally {
    await sh(`"${TSP}" -K 2>/dev/null; true`, env);
    unguard();
  }
}

/** nq: gate, N `true` jobs (each a waiting process), open the gate, `nq -w` for all. */
export async function nqDrain(n: number): Promise<DrainResult> {
  const dir = tempDir("nq");
  const env = { NQDIR: dir };
  const gate = join(dir, "GO");
  const unguard = onAbort(() => Bun.spawnSync(["sh", "-c", `: > "${gate}"`]));
  await sh(`"${NQ}" -q sh -c 'while [ ! -e "${gate}" ]; do sleep 0.005; done'`, env);
  const add = await sh(`i=0; while [ $i -lt ${n} ]; do "${NQ}" -q true || exit 1; i=$((i+1)); done`, env);
  if (add.code !== 0) throw new Error(`nq add failed (exit ${add.code})`);
  const t0 = performance.now();
  writeFile(gate, "");
  const w = await sh(`"${NQ}" -w`, env);
  const ms = performance.now() - t0;
  if (w.code !== 0) throw new Error(`nq -w exited ${w.code}`);
  const jobs = readdirSync(dir).filter((f) => f.startsWith(",")).length;
  unguard();
  if (jobs < n + 1) throw new Error(`nq: only ${jobs} job files`);
  return { ms, jobs: n };
}

export interface LatencySample {
  /** job start − add process exit, ms */
  fromExit: number;
  /** job start − add process spawn, ms */
  fromSpawn: number;
  /** add process wall time, ms */
  addMs: number;
}

/** Reads a `date +%s%N` stamp file as epoch ms, or null while it is not complete. */
export function readStamp(path: string): number | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8").trim();
  if (!/^\d{19}$/.test(text)) return null;
  return Number(BigInt(text) / 1000n) / 1000;
}

/** The command every latency probe runs: records its start in ns. */
export const stampArgv = (file: string) => ["sh", "-c", `date +%s%N > '${file}'`];

async function probe(
  add: (argv: string[]) => Promise<{ ms: number; code: number }>,
  dir: string,
  samples: number,
  settleMs: number,
): Promise<LatencySample[]> {
  const out: LatencySample[] = [];
  for (let i = 0; i < samples; i++) {
    const file = join(dir, `stamp-${i}`);
    const t0 = wallMs();
    const r = await add(stampArgv(file));
    const t1 = wallMs();
    if (r.code !== 0) throw new Error(`add exited ${r.code}`);
    const stamp = await waitFor(() => readStamp(file), 30_000, 1, "the job's stamp");
    out.push({ fromExit: stamp - t1, fromSpawn: stamp - t0, addMs: r.ms });
    await sleep(settleMs + Math.random() * 100);
  }
  return out;
}

export async function tspLatency(samples: number, settleMs: number): Promise<LatencySample[]> {
  const dir = tempDir("tsp-lat");
  const env = { TS_SOCKET: join(dir, "socket"), TMPDIR: dir };
  const unguard = guardTsp(env);
  try {
    await sh(`"${TSP}" -S 1 >/dev/null; "${TSP}" true >/dev/null; "${TSP}" -w >/dev/null`, env);
    await sleep(200);
    return await probe((argv) => run([TSP!, ...argv], { env, quiet: true }), dir, samples, settleMs);
  } finally {
    await sh(`"${TSP}" -K 2>/dev/null; true`, env);
    unguard();
  }
}

export async function nqLatency(samples: number, settleMs: number): Promise<LatencySample[]> {
  const dir = tempDir("nq-lat");
  const env = { NQDIR: dir };
  return probe((argv) => run([NQ!, "-q", ...argv], { env, quiet: true }), dir, samples, settleMs);
}

/** Wall time of one `tsp true` / `nq true` client call on an idle queue (the "add" cost). */
export async function clientAddMs(kind: "tsp" | "nq", samples: number): Promise<number[]> {
  const dir = tempDir(`${kind}-add`);
  const env: Record<string, string> = kind === "tsp" ? { TS_SOCKET: join(dir, "socket"), TMPDIR: dir } : { NQDIR: dir };
  const ms: number[] = [];
  const unguard = kind === "tsp" ? guardTsp(env) : () => {};
  try {
    if (kind === "tsp") await sh(`"${TSP}" -S 1 >/dev/null`, env);
    for (let i = 0; i < samples; i++) {
      const r = await run(kind === "tsp" ? [TSP!, "true"] : [NQ!, "-q", "true"], { env, quiet: true });
      ms.push(r.ms);
      await sleep(20);
    }
  } finally {
    if (kind === "tsp") await sh(`"${TSP}" -w >/dev/null 2>&1; "${TSP}" -K 2>/dev/null; true`, env);
    else await sh(`"${NQ}" -w`, env);
    unguard();
  }
  return ms;
}
