/**
 * An absent PostgreSQL queue: the database is reachable but holds no spoolctl
 * schema yet, and the verb opened it for reading (create: false). As with a
 * SQLite file that does not exist, it reads as an empty queue and creates
 * nothing: reads and writes go to an empty, migrated in-memory SQLite queue
 * (the SQLite driver's own stand-in), so every reader answers exactly as an
 * empty queue does without a second implementation of each read.
 * {@link AbsentPgStore.appeared} tells a waiting reader when a writer has
 * created the schema (index.ts reopens then).
 */
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { ClaimedJob, ClaimRequest } from "../attempt-types.ts";
import type { StoreReader } from "../reader.ts";
import { migrate as migrateSqlite } from "../sqlite/migrations.ts";
import { SqliteStore } from "../sqlite/sqlite-store.ts";
import type { QueryPlan, Store, Waker, WorkWaker } from "../store.ts";
import { pollingWorkWaker } from "../wake-signal.ts";
import type { StoreWriter } from "../writer.ts";
import type { QueueClock } from "./connect.ts";
import type { ErrorContext } from "./errors.ts";
import { watchChannel } from "./listen.ts";
import { PG_SCHEMA_VERSION, readSchemaState } from "./migrations.ts";

/** A reachable database without the schema, read as an empty queue. */
export class AbsentPgStore implements Store {
  readonly driver = "postgres" as const;
  readonly shipsOutput = true;
  readonly exists = false;
  readonly queueId = "";
  private readonly empty: SqliteStore;

  constructor(
    private readonly sql: SQL,
    private readonly ctx: ErrorContext,
    private readonly clock: QueueClock,
    readonly spoolDir: string,
  ) {
    const db = new Database(":memory:");
    migrateSqlite(db, ":memory:");
    this.empty = new SqliteStore(db, ctx.location, spoolDir, false);
  }

  get location(): string {
    return this.ctx.location;
  }

  now(): number {
    return this.clock.now();
  }

  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T> {
    return this.empty.read(fn);
  }

  write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
    return this.empty.write(fn);
  }

  claimJobs(req: ClaimRequest): Promise<ClaimedJob[]> {
    return this.empty.claimJobs(req);
  }

  async writeAndClaim<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<{ result: T; claimed: ClaimedJob[] | null }> {
    return { result: await this.empty.write(fn), claimed: null };
  }

  /** No channel before the queue has an id: the caller's poll wakes it. */
  watch(): Waker {
    return watchChannel(null, null);
  }

  /** No queue id yet, no channel: the worker's poll wakes it. */
  watchWork(): WorkWaker {
    return pollingWorkWaker();
  }

  /** The server manages its own WAL: nothing to do. */
  betweenWrites<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.empty.betweenWrites(fn);
  }

  async checkpoint(): Promise<boolean> {
    return true;
  }

  /** The server checks its own pages (data_checksums); nothing to read here. */
  async checkIntact(): Promise<void> {}

  /** A database on a server has no file to lose. */
  replaced(): null {
    return null;
  }

  /** No schema, no statements to plan. */
  async explainHotPath(): Promise<QueryPlan[]> {
    return [];
  }

  /** Whether a writer has since created the whole schema (errors: not yet). */
  async appeared(): Promise<boolean> {
    try {
      return (await readSchemaState(this.sql)).version >= PG_SCHEMA_VERSION;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.empty.close();
    await this.sql.close({ timeout: 5 });
  }
}
