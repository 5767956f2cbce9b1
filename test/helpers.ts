/**
 * Test helpers: a temp queue per test, the real CLI as a subprocess, and
 * polling with a generous deadline (never sleep-and-hope).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Absolute path of the CLI entry. */
export const CLI = resolve(import.meta.dir, "../src/cli.ts");

/** Fast timing knobs for tests (seconds). */
export const FAST_KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2", SPOOLCTL_TEST_REAP_THRESHOLD: "1" };

/** Result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws if it is not). */
  json: any;
}

/** A scratch queue: a temp folder with `queue.db`. */
export class TempQueue {
  readonly dir: string;
  readonly db: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "spoolctl-test-"));
    this.db = join(this.dir, "queue.db");
  }

  /** Env for CLI runs against this queue. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), SPOOLCTL_DB: this.db, NO_COLOR: "1", ...extra };
    return env;
  }

  /** Runs the CLI to completion. */
  async run(args: string[], opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}): Promise<CliResult> {
    const proc = Bun.spawn(["bun", CLI, ...args], {
      env: this.env(opts.env),
      cwd: opts.cwd ?? this.dir,
      stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return {
      code,
      stdout,
      stderr,
      get json() {
        return JSON.parse(stdout);
      },
    };
  }

  /** Runs the CLI with `--json` and returns the envelope (asserting stdout is one JSON object). */
  async json(args: string[], opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}): Promise<{ code: number; env: any; stderr: string }> {
    const r = await this.run([...args, "--json"], opts);
    let env: any;
    try {
      env = JSON.parse(r.stdout);
    } catch {
      throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
    }
    return { code: r.code, env, stderr: r.stderr };
  }

  /** Starts the CLI in the background (a worker, say). */
  spawn(args: string[], opts: { env?: Record<string, string> } = {}) {
    return Bun.spawn(["bun", CLI, ...args], { env: this.env(opts.env), cwd: this.dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  }

  /** `add --json ARGS…` (flags before `--`); returns the new job's id, throwing on failure. */
  async addJob(...args: string[]): Promise<number> {
    const r = await this.run(["add", "--json", ...args]);
    if (r.code !== 0) throw new Error(`add failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
    return r.json.data.job_id as number;
  }

  /** Writes to the database directly: a test-only shortcut (e.g. make a backoff due now). */
  exec(sql: string, ...params: any[]): void {
    const db = new Database(this.db);
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      db.query(sql).run(...params);
    } finally {
      db.close();
    }
  }

  /** Reads the database directly (read-only), for assertions. */
  query<T = any>(sql: string, ...params: any[]): T[] {
    const db = new Database(this.db, { readonly: true });
    try {
      // A worker opening or closing the file can hold it busy for a moment (WAL recovery, checkpoint).
      db.exec("PRAGMA busy_timeout = 5000");
      return db.query(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }

  /** Removes the folder. */
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** Whether a process exists (and is not a zombie). */
export function processLives(pid: number): boolean {
  try {
    const stat = require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8") as string;
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
