/**
 * An absent PostgreSQL queue: the database is reachable but holds no spoolctl
 * schema yet, and the verb opened it for reading (create: false). As with a
 * SQLite file that does not exist, it reads as an empty queue and creates
 * nothing: reads and writes go to the empty queue every driver shares
 * (`EMPTY_QUEUE` of ../empty-queue.ts), so every reader answers exactly as an
 * empty queue does without a second implementation of each read.
 * {@link AbsentPgStore.appeared} tells a waiting reader when a writer has
 * created the schema (index.ts reopens then).
 */
import type { SQL } from "bun";
import type { ClaimedJob, ClaimRequest } from "../attempt-types.ts";
import { EMPTY_QUEUE } from "../empty-queue.ts";
import type { StoreReader } from "../reader.ts";
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

  constructor(
    private readonly sql: SQL,
    private readonly ctx: ErrorContext,
    private readonly clock: QueueClock,
    readonly spoolDir: string,
  ) {}

  get location(): string {
    return this.ctx.location;
  }

  now(): number {
    return this.clock.now();
  }

  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T> {
    return fn(EMPTY_QUEUE);
  }

  write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
    return fn(EMPTY_QUEUE);
  }

  /** Nothing to claim in an empty queue. */
  async claimJobs(_req: ClaimRequest): Promise<ClaimedJob[]> {
    return [];
  }

  async writeAndClaim<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<{ result: T; claimed: ClaimedJob[] | null }> {
    return { result: await fn(EMPTY_QUEUE), claimed: null };
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
  async betweenWrites<T>(fn: () => T | Promise<T>): Promise<T> {
    return await fn();
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
    await this.sql.close({ timeout: 5 });
  }
}
