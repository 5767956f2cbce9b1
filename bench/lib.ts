/**
 * Shared helpers of the benchmark suite (bench/run.ts): process timing, simple
 * statistics, temp folders, machine description.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, release, tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * Absolute path of the CLI entry point: this checkout's src/cli.ts, or
 * $SPOOLCTL_BENCH_CLI (to measure another checkout, e.g. a proposed fix, A/B).
 */
export const CLI = process.env.SPOOLCTL_BENCH_CLI
  ? resolve(process.env.SPOOLCTL_BENCH_CLI)
  : resolve(import.meta.dir, "../src/cli.ts");
/** The Bun binary running the benchmark; used for every spawned CLI. */
export const BUN = process.execPath;

/** Wall clock in epoch milliseconds with sub-millisecond resolution. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number) => Bun.sleep(ms);

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1]!;
}

export const min = (xs: number[]) => Math.min(...xs);
export const max = (xs: number[]) => Math.max(...xs);

export function fmt(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return "n/a";
  return n.toFixed(digits);
}

/** Undo steps to run if the benchmark is interrupted (stop a tsp server, open a gate…). */
const abortHooks = new Set<() => void>();
export function onAbort(fn: () => void): () => void {
  abortHooks.add(fn);
  return () => abortHooks.delete(fn);
}
/** Runs every registered undo step (synchronously), then removes the temp folders. */
export function abortAll(): void {
  for (const fn of [...abortHooks].reverse()) {
    try {
      fn();
    } catch {
      // best effort
    }
  }
  abortHooks.clear();
  cleanup();
}

/** A long-running child (worker) to SIGTERM if the benchmark is interrupted; returns the untrack function. */
export function trackChild(proc: {
  kill(signal?: number | NodeJS.Signals): void;
  exitCode: number | null;
}): () => void {
  return onAbort(() => {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  });
}

/** A fresh temp folder; removed by {@link cleanup} unless `--keep`. */
const made: string[] = [];
export function tempDir(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), `spoolctl-bench-${tag}-`));
  made.push(dir);
  return dir;
}
export function cleanup(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface Ran {
  ms: number;
  code: number;
  stdout: string;
  stderr: string;
  /** Peak RSS of the process in bytes (getrusage of the waited child). */
  maxRss: number;
  /** CPU time (user + system) in milliseconds. */
  cpuMs: number;
}

/** Runs a command to completion and times it from spawn to exit. */
export async function run(
  argv: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string; quiet?: boolean } = {},
): Promise<Ran> {
  const t0 = performance.now();
  const proc = Bun.spawn(argv, {
    env: { ...process.env, ...(opts.env ?? {}) } as Record<string, string>,
    cwd: opts.cwd,
    stdin: opts.stdin !== undefined ? new Blob([opts.stdin]) : "ignore",
    stdout: opts.quiet ? "ignore" : "pipe",
    stderr: opts.quiet ? "ignore" : "pipe",
  });
  const untrack = trackChild(proc);
  const [stdout, stderr] = opts.quiet
    ? ["", ""]
    : await Promise.all([
        new Response(proc.stdout as ReadableStream).text(),
        new Response(proc.stderr as ReadableStream).text(),
      ]);
  const code = await proc.exited;
  const ms = performance.now() - t0;
  untrack();
  const ru = proc.resourceUsage();
  return { ms, code, stdout, stderr, maxRss: ru?.maxRSS ?? NaN, cpuMs: ru ? Number(ru.cpuTime.total) / 1000 : NaN };
}

/** `bun src/cli.ts ARGS…`. */
export function cli(args: string[], opts: Parameters<typeof run>[1] = {}): Promise<Ran> {
  return run([BUN, CLI, ...args], opts);
}

/** Runs the CLI and fails loudly on a non-zero exit. */
export async function cliOk(args: string[], opts: Parameters<typeof run>[1] = {}): Promise<Ran> {
  const r = await cli(args, opts);
  if (r.code !== 0) throw new Error(`spoolctl ${args.join(" ")} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r;
}

/** N identical job specs as NDJSON. */
export function ndjson(n: number, argv: string[]): string {
  const line = `${JSON.stringify({ argv })}\n`;
  return line.repeat(n);
}

export function writeFile(path: string, text: string): string {
  writeFileSync(path, text);
  return path;
}

/** VmHWM / VmRSS of a live process in bytes, or null. */
export function procMemory(pid: number): { hwm: number; rss: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) =>
      Number(/^(\w+):\s+(\d+) kB/m.exec(text.split("\n").find((l) => l.startsWith(`${key}:`)) ?? "")?.[2] ?? NaN) *
      1024;
    return { hwm: kb("VmHWM"), rss: kb("VmRSS") };
  } catch {
    return null;
  }
}

/** Waits until `check()` is truthy, polling every `everyMs`; throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 2,
  what = "condition",
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Which of the given programs are on PATH. */
export function which(name: string): string | null {
  return Bun.which(name);
}

/** nproc, CPU model, kernel, Bun version, load average. */
export function machine(): Record<string, string> {
  let model = cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) model = line.split(":")[1]!.trim();
  } catch {
    // not Linux
  }
  let mem = "";
  try {
    mem = `${Math.round(Number(/MemTotal:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1]) / 1024)} MiB`;
  } catch {
    // not Linux
  }
  let load = "";
  try {
    load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    // not Linux
  }
  let fs = "";
  try {
    const out = Bun.spawnSync(["df", "-T", tmpdir()], { stdout: "pipe", stderr: "ignore" })
      .stdout.toString()
      .split("\n")[1];
    fs = out?.split(/\s+/)[1] ?? "";
  } catch {
    // no df
  }
  return {
    nproc: String(navigator.hardwareConcurrency ?? cpus().length),
    cpu: model,
    memory: mem,
    kernel: `${process.platform} ${release()}`,
    bun: Bun.version,
    tmpdir: `${tmpdir()}${fs ? ` (${fs})` : ""}`,
    "load average at start": load,
  };
}

export function exists(path: string): boolean {
  return existsSync(path);
}
