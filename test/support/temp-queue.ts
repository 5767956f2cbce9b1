/**
 * A temp queue per test and the real CLI as a subprocess: {@link useTempQueue}
 * gives each test of a file (or describe block) a fresh {@link TempQueue} and
 * removes it afterwards.
 *
 * The queue's database is chosen by SPOOLCTL_TEST_DB (see queue-fixtures.ts):
 * a SQLite file by default, a fresh PostgreSQL database per TempQueue with a
 * postgres:// URL. Tests check state through the CLI's JSON or through the
 * driver (TempQueue.job(), .attempts() …), never with SQL, so that the same
 * test runs on either.
 */

import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Attempt, Job, JobEvent, WorkerRecord } from "../../src/model/job.ts";
import { openQueue, type Store, type StoreReader, type StoreWriter } from "../../src/store/index.ts";
import { type QueueLocation, resolveLocation } from "../../src/store/location.ts";
import { formatArgv } from "../../src/ui/text.ts";
import { createPgDatabase, dropPgDatabase, ON_POSTGRES, TEST_DB } from "./queue-fixtures.ts";

export { ON_POSTGRES };

/**
 * Absolute path of the CLI the tests run: the source entry, or the packed
 * bundle `bun run test` builds once for the whole suite (`SPOOLCTL_TEST_CLI`,
 * test/run-suite.ts): what a user gets from the package, and about a quarter
 * less CPU per process than transpiling the source at every start.
 */
export const CLI = process.env.SPOOLCTL_TEST_CLI || resolve(import.meta.dir, "../../src/cli.ts");

/**
 * Fast timing knobs for tests (seconds). On PostgreSQL the lease is 3 s: a worker that stops
 * its jobs when it misses renewals (and its watchdog, on the same clock) acts on time, and a
 * 1 s lease is missed under a loaded CI machine's scheduling delays (docs/architecture.md
 * "Heartbeat and lease": a lease shorter than the worst renewal delay is lost again and again).
 */
export const FAST_KNOBS = {
  SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2",
  SPOOLCTL_TEST_REAP_THRESHOLD: ON_POSTGRES ? "3" : "1",
};

/** More rows than any test makes: "all of them" for the driver's paged reads. */
const ALL = 1_000_000;

/** Result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws if it is not). */
  json: any;
}

/** Everything a queue holds, read in one snapshot through the driver (for "nothing changed" checks). */
export interface QueueSnapshot {
  queue_id: string;
  jobs: Job[];
  attempts: Attempt[];
  events: JobEvent[];
  workers: WorkerRecord[];
  settings: Record<string, string>;
}

/**
 * A scratch queue: a temp folder (the CLI's cwd, the spool, scratch files) and
 * a database, SQLite `queue.db` in that folder or a fresh PostgreSQL database.
 */
export class TempQueue {
  readonly dir: string;
  /** What SPOOLCTL_DB is set to: the SQLite file `dir/queue.db`, or the PostgreSQL database URL. */
  readonly db: string;
  readonly driver: "sqlite" | "postgres";
  private readonly pgName: string | null = null;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "spoolctl-test-"));
    this.driver = TEST_DB.driver;
    if (TEST_DB.driver === "postgres") {
      try {
        const created = createPgDatabase();
        this.pgName = created.name;
        this.db = created.url;
      } catch (error) {
        rmSync(this.dir, { recursive: true, force: true });
        throw error;
      }
    } else {
      this.db = join(this.dir, "queue.db");
    }
  }

  /**
   * The variables that point the CLI at this queue. SQLite: the spool is the
   * folder beside the file. PostgreSQL: the CLI keeps a URL's spool under
   * $XDG_STATE_HOME/spoolctl/ (src/store/location.ts; there is no
   * SPOOLCTL_SPOOL_DIR), so XDG_STATE_HOME points into the temp folder.
   */
  queueEnv(): Record<string, string> {
    return this.driver === "postgres"
      ? { SPOOLCTL_DB: this.db, XDG_STATE_HOME: join(this.dir, "state") }
      : { SPOOLCTL_DB: this.db };
  }

  /** {@link db} as hints print it after `--db`: quoted for the shell when it needs it (a URL's `?`). */
  get dbWord(): string {
    return formatArgv([this.db]);
  }

  /** The spool folder (attempt output as `output/JOB.ATTEMPT.stdout|stderr`), where the CLI puts it: `dir/queue.spool` for SQLite. */
  get spool(): string {
    return this.location().spoolDir;
  }

  /** Env for CLI runs against this queue. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...this.queueEnv(),
      NO_COLOR: "1",
      ...extra,
    };
    // Bun's SQL client would take PGDATABASE over the database in SPOOLCTL_DB.
    if (this.driver === "postgres" && extra.PGDATABASE === undefined) delete env.PGDATABASE;
    return env;
  }

  /** Runs the CLI to completion. */
  async run(
    args: string[],
    opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {},
  ): Promise<CliResult> {
    const proc = Bun.spawn(["bun", CLI, ...args], {
      env: this.env(opts.env),
      cwd: opts.cwd ?? this.dir,
      stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
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
  async json(
    args: string[],
    opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {},
  ): Promise<{ code: number; env: any; stderr: string }> {
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
    return Bun.spawn(["bun", CLI, ...args], {
      env: this.env(opts.env),
      cwd: this.dir,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  /** `add --json ARGS…` (flags before `--`); returns the new job's id, throwing on failure. */
  async addJob(...args: string[]): Promise<number> {
    const r = await this.run(["add", "--json", ...args]);
    if (r.code !== 0) throw new Error(`add failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
    return r.json.data.job_id as number;
  }

  /** `config set KEY VALUE` (a queue-wide setting, e.g. a short backoff_cap), throwing on failure. */
  async setConfig(key: string, value: string): Promise<void> {
    const r = await this.run(["config", "set", key, value]);
    if (r.code !== 0) throw new Error(`config set ${key} ${value} failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  }

  // --- The driver: state checks go through the same Store the CLI uses. ---

  /** Where the CLI finds this queue, resolved by the CLI's own rules from {@link queueEnv}. */
  location(): QueueLocation {
    return resolveLocation(undefined, { ...this.queueEnv() }, this.dir);
  }

  /**
   * Opens the queue through the driver for reading, runs `fn`, closes it. A
   * queue that does not exist yet reads as empty and is not created.
   */
  async use<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const store = await openQueue(this.location(), { create: false, readOnly: true });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  /** Runs `fn` in one read snapshot of the queue (through the driver). */
  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T> {
    return this.use((store) => store.read(fn));
  }

  /**
   * Runs `fn` in one write transaction through the driver (test-only shortcuts
   * that a driver method covers). The queue must exist already.
   */
  async write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
    const store = await openQueue(this.location(), { create: false });
    try {
      if (!store.exists) throw new Error(`TempQueue.write: the queue ${this.db} does not exist yet`);
      return await store.write(fn);
    } finally {
      await store.close();
    }
  }

  /** The job, or null. */
  job(id: number): Promise<Job | null> {
    return this.read((tx) => tx.getJob(id));
  }

  /** Every job, oldest first. */
  async jobs(): Promise<Job[]> {
    return (await this.read((tx) => tx.listJobs({ limit: ALL }))).reverse();
  }

  /** One attempt of a job (default: its first), or null. */
  attempt(jobId: number, attemptNo = 1): Promise<Attempt | null> {
    return this.read((tx) => tx.getAttempt(jobId, attemptNo));
  }

  /** A job's attempts, oldest first. */
  attempts(jobId: number): Promise<Attempt[]> {
    return this.read((tx) => tx.attemptsOf(jobId));
  }

  /** Every attempt of every job, by job id then attempt number. */
  allAttempts(): Promise<Attempt[]> {
    return this.read(allAttemptsIn);
  }

  /** A job's ledger, oldest first. */
  events(jobId: number): Promise<JobEvent[]> {
    return this.read((tx) => tx.eventsOf(jobId));
  }

  /** The event names of a job's ledger, oldest first. */
  async eventNames(jobId: number): Promise<string[]> {
    return (await this.events(jobId)).map((e) => e.event);
  }

  /** The whole ledger, oldest first. */
  allEvents(): Promise<JobEvent[]> {
    return this.read((tx) => tx.listEvents({ afterId: 0, limit: ALL }));
  }

  /** The workers registry, most recently seen first. */
  workers(): Promise<WorkerRecord[]> {
    return this.read((tx) => tx.listWorkers(ALL));
  }

  /** One worker's registry row, or null. */
  worker(workerId: string): Promise<WorkerRecord | null> {
    return this.read((tx) => tx.getWorker(workerId));
  }

  /** Whether the worker is registered and has not stopped (it has started up). */
  async registered(workerId: string): Promise<boolean> {
    const w = await this.worker(workerId);
    return w !== null && w.stopped_at === null;
  }

  /** The queue's identity (attempt markers are made of it); "" before the queue exists. */
  queueId(): Promise<string> {
    return this.use(async (store) => store.queueId);
  }

  /** Everything the queue holds, in one snapshot: for "nothing changed" checks. */
  snapshot(): Promise<QueueSnapshot> {
    return this.use(async (store) =>
      store.read(async (tx) => ({
        queue_id: store.queueId,
        jobs: (await tx.listJobs({ limit: ALL })).reverse(),
        attempts: await allAttemptsIn(tx),
        events: await tx.listEvents({ afterId: 0, limit: ALL }),
        workers: (await tx.listWorkers(ALL)).sort((a, b) =>
          a.worker_id < b.worker_id ? -1 : a.worker_id > b.worker_id ? 1 : 0,
        ),
        settings: await tx.listSettings(),
      })),
    );
  }

  /**
   * Whether the queue has been created. SQLite: whether the file exists (read
   * verbs must not even create an empty one). PostgreSQL: the database is made
   * by the test, so whether the driver finds a queue (its schema) in it.
   */
  async exists(): Promise<boolean> {
    if (this.driver === "sqlite") return existsSync(this.db);
    return this.use(async (store) => store.exists);
  }

  /** Removes the folder (and on PostgreSQL drops the database). */
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
    if (this.pgName) dropPgDatabase(this.pgName);
  }
}

/** Every attempt of every job in `tx`, by job id then attempt number (independent reads: PostgreSQL pipelines them). */
async function allAttemptsIn(tx: StoreReader): Promise<Attempt[]> {
  const jobs = (await tx.listJobs({ limit: ALL })).reverse();
  return (await Promise.all(jobs.map((job) => tx.attemptsOf(job.id)))).flat();
}

/** What {@link useTempQueue} does besides making and removing the queue. */
export interface TempQueueHooks {
  /**
   * `"each"` (the default): a fresh queue for every test. `"file"`: one queue for all the tests
   * of the scope, made before the first (the scope's own beforeAll hooks run after) and removed
   * after the last: for files whose tests read one prepared queue.
   */
  scope?: "each" | "file";
  /**
   * Runs before the queue is removed, even when a test failed: e.g. `stopProcessesOf`
   * (processes.ts), or closing a terminal the test opened.
   */
  teardown?: (q: TempQueue) => unknown;
  /** Timeout of the two hooks (ms); default 120 s: a teardown may wait for killed processes. */
  timeoutMs?: number;
}

/**
 * Gives the tests of the calling scope (the file, or the `describe` block it is called in) a
 * fresh {@link TempQueue}, one per test (or one for them all with `scope: "file"`): registers
 * the hook that makes it and the one that runs `hooks.teardown`, then removes it (folder, and
 * the PostgreSQL database under SPOOLCTL_TEST_DB). Returns a stand-in that forwards every
 * property to the current queue, so a file keeps writing `q.run(…)`; touching it outside a test
 * (or after the test ended or timed out) throws. Hooks the file registers after this call run
 * after the queue is made, and after it is removed (bun runs both kinds in registration order).
 */
export function useTempQueue(hooks: TempQueueHooks = {}): TempQueue {
  const timeout = hooks.timeoutMs ?? 120_000;
  const [before, after] = hooks.scope === "file" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  let current: TempQueue | null = null;
  before(() => {
    current = new TempQueue();
  }, timeout);
  after(async () => {
    const q = current;
    if (!q) return;
    try {
      await hooks.teardown?.(q);
    } finally {
      current = null;
      q.cleanup();
    }
  }, timeout);
  return new Proxy(Object.create(TempQueue.prototype) as TempQueue, {
    get(_target, prop) {
      if (!current)
        throw new Error(
          `useTempQueue: no current queue (read outside a test, or after its test ended or timed out): ${String(prop)}`,
        );
      const value = Reflect.get(current, prop, current);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}
