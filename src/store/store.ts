/**
 * The driver interface between the queue operations (`src/ops/`) and a
 * database: every method is async and does a whole operation, so that a driver
 * reached over a network pays one round trip per call. Each driver (SQLite in
 * `src/store/sqlite/`, PostgreSQL in `src/store/postgres/`) passes the one
 * conformance suite in `test/store/`. The driver contract, and which rules rest
 * on isolation, are in docs/architecture.md ("The driver contract", "Rules that
 * rest on isolation").
 *
 * Every method of {@link StoreWriter} runs inside the transaction opened by
 * {@link Store.write}, so an operation that reads, decides and writes does so
 * atomically. A callback given to `read`/`write` awaits nothing but the
 * transaction's own methods. Times are epoch seconds (float).
 *
 * The types of what the methods take and return are apart, by topic:
 * reader.ts ({@link StoreReader}), writer.ts ({@link StoreWriter}) and
 * attempt-types.ts (the claim, heartbeats, results).
 */
import type { SpoolError } from "../contract/errors.ts";
import type { ClaimedJob, ClaimRequest } from "./attempt-types.ts";
import type { StoreReader } from "./reader.ts";
import type { StoreWriter } from "./writer.ts";

/** A wake-up source: resolves soon after another process commits to the queue. */
export interface Waker {
  /** Resolves at the next commit seen or after `ms`, whichever is first. */
  wait(ms: number): Promise<void>;
  /** Wakes a pending {@link wait} now (used by the worker's own events). */
  poke(): void;
  close(): void;
}

/** How the database answers one statement: the plan's lines, as the driver's EXPLAIN prints them. */
export interface QueryPlan {
  /** The statement's name (the driver's hot-path table: src/store/<driver>/hot-path.ts). */
  name: string;
  plan: string[];
}

/**
 * A worker's wake-up source (docs/architecture.md "Waking"): resolves when
 * work it may take appears in its lane — a job added or requeued into it, or,
 * when asked for, a job of the lane ending (a freed slot) — or a stop or an
 * operator's retry or cancel is written; not on every commit of every worker.
 */
export interface WorkWaker {
  /**
   * Resolves at the next such signal (`freed`: a lane's job ending counts too), a poke, or after `ms`.
   * `hungry` (default true): the worker has room for another job, so a signal could give it one.
   * A busy worker (false) is woken by its own pokes and the poll; a driver whose wake-ups cost the
   * server something per listener (PostgreSQL: every commit that notifies signals every listening
   * backend) stops listening while the worker is busy (docs/architecture.md "Waking").
   */
  wait(ms: number, freed: boolean, hungry?: boolean): Promise<void>;
  /** Wakes a pending {@link wait} now (the worker's own attempt ended). */
  poke(): void;
  close(): void;
  /**
   * Whether an `all` signal (a cancel, a fail-fast, a stop: docs/architecture.md
   * "Waking") arrived since the last call; consumes it. The worker then reads
   * the stop requests of its running jobs at once.
   */
  takeStop(): boolean;
  /**
   * Whether `all` reaches this worker while it is busy too (SQLite: the wake file
   * is watched whatever the worker does). False (PostgreSQL unlistens while busy):
   * a busy worker reads its stop requests every 250 ms instead.
   */
  readonly hearsWhileBusy: boolean;
}

/**
 * How a write commits (docs/architecture.md "Durability"). `durable: false`
 * is for a worker's own writes that acknowledge nothing to anyone (its
 * results, heartbeats, its registry row): the commit need not be on disk
 * before it returns, and a power cut may roll it back (SQLite:
 * `synchronous=NORMAL` for that commit, the next durable commit syncs it too;
 * PostgreSQL: `synchronous_commit = off` for that transaction). Both logs are
 * written in order, so a commit that survives brings every earlier one with
 * it. Default: durable.
 */
export interface WriteOptions {
  durable?: boolean;
}

/** An open queue. */
export interface Store {
  /** Which driver this is. */
  readonly driver: "sqlite" | "postgres";
  /** Where the queue is, fit to print: a file path, or a URL without its password. */
  readonly location: string;
  /** Absolute path of the spool folder holding attempt output on this host. */
  readonly spoolDir: string;
  /**
   * Whether the queue exists yet (false: an absent queue opened for reading,
   * which reads as empty and creates nothing).
   */
  readonly exists: boolean;
  /** The queue's identity (kept in `meta`; "" for an absent queue), used for attempt markers. */
  readonly queueId: string;
  /**
   * The queue's clock, epoch seconds: this host's clock corrected by the skew
   * to the database's measured at connect (SQLite: this host's clock). Every
   * time a worker writes comes from here, so hosts whose clocks disagree still
   * agree on when a job is due (docs/architecture.md "Clocks").
   */
  now(): number;
  /**
   * Whether workers ship attempt output into the database as it is written
   * (a queue shared by several hosts), so that readers on other hosts see it.
   */
  readonly shipsOutput: boolean;
  /** Runs `fn` in a read snapshot. */
  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in one write transaction; commits when it resolves, rolls back
   * when it throws. Raises `LOCKED` (exit 4) when the write lock cannot be had
   * in time, `INTERNAL` with `detail.storage` when the storage fails.
   * `opts.durable` (default true): see {@link WriteOptions}.
   */
  write<T>(fn: (tx: StoreWriter) => Promise<T>, opts?: WriteOptions): Promise<T>;
  /**
   * The claim, in one short transaction: up to `req.limit` eligible jobs of the
   * lane in claim order, moved to `running` for the worker with their attempt
   * rows and `claimed` events; fewer (or none) when the lane's `slots` are taken.
   * `spoolDir` names where the attempt output will be written.
   */
  claimJobs(req: ClaimRequest): Promise<ClaimedJob[]>;
  /**
   * `write(fn)` followed, in the same transaction when the driver can, by the
   * claim `req` (docs/architecture.md "The claim"): a worker records a result
   * and claims the next job with one commit. `claimed` is null when the driver
   * did not claim (an absent queue); the caller then claims as usual. When
   * anything throws, nothing was written, except when the answer to the
   * COMMIT was lost: then the driver looks up what the claim holds before its
   * next claimJobs (PostgreSQL: docs/architecture.md "The claim"). The commit
   * is not synced on its own (`durable: false`, PostgreSQL
   * `synchronous_commit = off`): a worker's result acknowledges nothing to
   * anyone, and one lost to a power cut re-runs its job (docs/architecture.md
   * "Durability").
   */
  writeAndClaim<T>(
    fn: (tx: StoreWriter) => Promise<T>,
    req: ClaimRequest,
  ): Promise<{ result: T; claimed: ClaimedJob[] | null }>;
  /** A wake-up source for readers (`events --follow`, `status --watch`, `wait`): any commit. */
  watch(): Waker;
  /**
   * A worker's wake-up source for lane `queue`, or for each of several lanes
   * (a worker serving them: `work --queue a,b`; see {@link WorkWaker}).
   * `freed` (default true): whether the worker will ever ask for freed slots
   * (`--slots`, a drain); a driver may then not even deliver them to it.
   */
  watchWork(queue: string | readonly string[], opts?: { freed?: boolean }): WorkWaker;
  /**
   * The plan of every statement on the worker's hot path (the claim, the idle
   * and drain reads, the result, the heartbeat, the reaper's look-ups): SQLite's
   * `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN` with sequential scans priced
   * out. Nothing is run or written. Each must be answered from an index
   * (docs/architecture.md "The driver contract"); an absent queue has none.
   */
  explainHotPath(): Promise<QueryPlan[]>;
  /**
   * Folds the write-ahead log back into the database and truncates it to
   * nothing, when no reader is in the way (docs/architecture.md "Storage
   * conditions": a worker calls it when idle and after a full-disk episode).
   * SQLite: `wal_checkpoint(TRUNCATE)` waiting at most 100 ms for the lock,
   * nothing at all when the log is empty; PostgreSQL: nothing (the server
   * manages its own WAL). Resolves with whether the log is empty now. Raises
   * `INTERNAL` with `detail.storage` when the storage fails.
   */
  checkpoint(): Promise<boolean>;
  /**
   * Whether the queue is still the one at its location (docs/architecture.md
   * "A vanished or replaced file"): null while it is, else a `QUEUE_REPLACED`
   * error saying what became of it. SQLite: the path's (device, inode) against
   * those of the file opened, one stat(2) and no database I/O; a deleted file
   * (or folder) and a file moved or copied into place both count. PostgreSQL
   * and a queue that did not exist when opened: always null.
   */
  replaced(): SpoolError | null;
  /**
   * Checks that the queue's storage is not damaged (docs/architecture.md "A
   * damaged file"); raises `QUEUE_CORRUPT` when it is. SQLite: `PRAGMA
   * quick_check(1)`, which reads the whole file (about 0.1–0.3 s per 100,000
   * jobs), skipped for a file over {@link INTACT_CHECK_MAX_BYTES}; PostgreSQL
   * and an absent queue: nothing (the server checks its own pages).
   */
  checkIntact(): Promise<void>;
  /**
   * Runs `fn` while none of this store's write transactions (writes, claims;
   * on SQLite any transaction) is open, holding new ones back until it
   * returns: `work` stops itself on Ctrl-Z there, never holding a write lock
   * or row locks while stopped (docs/architecture.md "Contention").
   */
  betweenWrites<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Closes the connection. */
  close(): Promise<void>;
}

/** What a read operation needs of a queue: snapshots and the queue's clock (an opened {@link Store}, or a reader waiting for one to appear). */
export type SnapshotReader = Pick<Store, "read" | "now">;

/** Largest SQLite file {@link Store.checkIntact} reads whole (`status`'s check), bytes; `doctor` checks any size. */
export const INTACT_CHECK_MAX_BYTES = 256 * 1024 * 1024;
