/**
 * Opening a PostgreSQL queue (`--db postgres://…`): connect, read the schema
 * version and the clock in one round trip, migrate when needed, and the
 * {@link Store} over it. A database without spoolctl's schema opened for
 * reading is an absent queue (absent.ts): it reads as empty and nothing is
 * created in it; the first write verb (create: true) migrates it.
 */

import type { SQL } from "bun";
import { type ClaimedJob, type ClaimRequest, type DatedClaim, datedClaim } from "../attempt-types.ts";
import { FifoLock } from "../fifo-lock.ts";
import { hostNowMs } from "../host-clock.ts";
import type { StoreReader } from "../reader.ts";
import type { QueryPlan, Store, Waker, WorkWaker, WriteOptions } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { AbsentPgStore } from "./absent.ts";
import { claimStatement, lockLane, type StatementClaim } from "./claim.ts";
import { ClaimBook, runClaim } from "./claim-runner.ts";
import { COMMAND_POOL_SIZE, createClient, measureClockOffset, POOL_SIZE, QueueClock } from "./connect.ts";
import { type ErrorContext, mapPgError, sqlstate } from "./errors.ts";
import { channelOf, workChannelOf } from "./events.ts";
import { explainHotPath } from "./hot-path.ts";
import { watchChannel, watchWorkChannel } from "./listen.ts";
import {
  existingSpoolctlTables,
  migrate,
  PG_SCHEMA_VERSION,
  readSchemaState,
  refuseForeign,
  refuseNewer,
  type SchemaState,
} from "./migrations.ts";
import { runTransaction } from "./transaction.ts";
import { parsePgUrl, redactUrl } from "./url.ts";

/** The PostgreSQL driver's {@link Store}. */
class PgStore implements Store {
  readonly driver = "postgres" as const;
  /** Several hosts: workers ship attempt output into the database. */
  readonly shipsOutput = true;
  readonly exists = true;
  private readonly channel: string;
  private readonly wakers = new Set<{ close(): void }>();
  private readonly claims = new ClaimBook();
  /** Writes and claims of this store, one at a time (transaction.ts). */
  private readonly writes = new FifoLock();

  constructor(
    private readonly sql: SQL,
    private readonly ctx: ErrorContext,
    private readonly clock: QueueClock,
    readonly spoolDir: string,
    readonly queueId: string,
  ) {
    this.channel = channelOf(queueId);
  }

  get location(): string {
    return this.ctx.location;
  }

  now(): number {
    return this.clock.now();
  }

  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T> {
    return runTransaction(this.sql, "read", null, this.ctx, fn);
  }

  write<T>(fn: (tx: StoreWriter) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
    const kind = (opts.durable ?? true) ? "write" : "unsynced";
    // A write renews the kept rows a heartbeat touched, but decides on none (kept-rows.ts).
    const kept = { rows: this.claims.kept, decide: false };
    return this.writes.run(() => runTransaction(this.sql, kind, this.channel, this.ctx, fn, undefined, kept));
  }

  claimJobs(req: ClaimRequest): Promise<ClaimedJob[]> {
    return this.writes.run(() =>
      runClaim(this.sql, req, () => this.now(), this.spoolDir, this.channel, this.ctx, this.claims),
    );
  }

  /**
   * The write, then the claim in the same READ COMMITTED transaction: one
   * commit per job while the lane has work (docs/architecture.md "The
   * claim"). The claim statement is sent after the write's events and with
   * the COMMIT (one round trip), so the ledger reads "ended", then "claimed",
   * and the claim sees the slot the write freed; with `--slots` the lane's
   * row is locked first, as in claimJobs. When the COMMIT's answer is lost,
   * the claim may have committed: it is booked as in doubt and the next
   * claimJobs finds what it holds (claim-runner.ts).
   */
  writeAndClaim<T>(
    fn: (tx: StoreWriter) => Promise<T>,
    req: ClaimRequest,
  ): Promise<{ result: T; claimed: ClaimedJob[] | null }> {
    return this.writes.run(async () => {
      let claim: Promise<StatementClaim> | null = null;
      let dated: DatedClaim | null = null;
      try {
        await this.claims.ensureLane(this.sql, req);
        const slotted = this.claims.isSlotted(req);
        const result = await runTransaction(
          this.sql,
          "unsynced",
          this.channel,
          this.ctx,
          async (q, tx) => {
            const out = await fn(q);
            if (slotted) await lockLane(tx, req.queue);
            return out;
          },
          // Dated as it is sent, after the write's waits for row locks (ClaimRequest.now).
          (tx) =>
            (claim = claimStatement(
              tx,
              (dated = datedClaim(req, () => this.now())),
              this.spoolDir,
              this.channel,
              slotted,
            )),
          { rows: this.claims.kept, decide: true },
        );
        const { claimed, laneSlotted } = await claim!;
        // The lane has slots of its own: nothing was claimed; the worker's next claim runs slotted.
        if (laneSlotted) this.claims.slotted.add(req.queue);
        this.claims.record(claimed);
        return { result, claimed };
      } catch (error) {
        if (dated !== null) this.claims.markUncertain(dated);
        throw error;
      }
    });
  }

  watch(): Waker {
    const waker = watchChannel(this.sql, this.channel);
    this.wakers.add(waker);
    return {
      wait: (ms) => waker.wait(ms),
      poke: () => waker.poke(),
      close: () => {
        this.wakers.delete(waker);
        waker.close();
      },
    };
  }

  watchWork(queue: string | readonly string[], opts: { freed?: boolean } = {}): WorkWaker {
    const waker = watchWorkChannel(this.sql, workChannelOf(this.channel), queue, opts.freed ?? true);
    this.wakers.add(waker);
    return {
      wait: (ms, freed, hungry) => waker.wait(ms, freed, hungry),
      poke: () => waker.poke(),
      takeStop: () => waker.takeStop(),
      hearsWhileBusy: false,
      close: () => {
        this.wakers.delete(waker);
        waker.close();
      },
    };
  }

  explainHotPath(): Promise<QueryPlan[]> {
    return explainHotPath(this.sql);
  }

  /** The server manages its own WAL: nothing to do. */
  /** Reads are not held back: they take no row locks, and the server ends one left open (idle_in_transaction_session_timeout). */
  betweenWrites<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.writes.run(async () => fn());
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

  async close(): Promise<void> {
    for (const waker of this.wakers) waker.close();
    this.wakers.clear();
    await this.sql.close({ timeout: 5 });
  }
}

/** Options of {@link openPgStore}. */
export interface PgOpenOptions {
  /** The full URL (with its password, if any). */
  url: string;
  /** Absolute spool folder on this host. */
  spoolDir: string;
  /** Create (migrate) the schema when missing; when false, a database without it reads as an empty queue. */
  create: boolean;
  /** Transactions of this process overlap (a worker): a pool of {@link POOL_SIZE} connections, else one. */
  overlapping?: boolean;
}

/** The schema state and the clock offset, in one round trip when the queue exists. */
async function probe(sql: SQL): Promise<SchemaState & { offset: number | null }> {
  try {
    const rows = (await sql`SELECT key, value, extract(epoch from clock_timestamp())::float8 AS db_now
      FROM meta WHERE key IN ('schema_version', 'queue_id')`) as { key: string; value: string; db_now: number }[];
    // The first statement also paid for connecting: the server's time is nearest the answer's arrival.
    const offset = rows.length > 0 ? rows[0]!.db_now - hostNowMs() / 1000 : null;
    const get = (k: string) => rows.find((r) => r.key === k)?.value;
    return { version: Number(get("schema_version") ?? 0), queueId: get("queue_id") ?? "", offset };
  } catch (error) {
    if (sqlstate(error) !== "42P01") throw error; // no meta table: a database without the schema
    return { version: 0, queueId: "", offset: null };
  }
}

/**
 * Opens (and, with `create`, migrates) the queue at a `postgres://` URL.
 * Raises `INVALID_INPUT` for a malformed URL, `INTERNAL` when the database
 * cannot be reached (`detail.storage: "unreachable"`), refuses the login, is
 * newer than this binary or holds someone else's tables; `LOCKED` when a
 * migration waits out the lock.
 */
export async function openPgStore(opts: PgOpenOptions): Promise<Store> {
  const settings = parsePgUrl(opts.url);
  const ctx: ErrorContext = {
    location: redactUrl(opts.url),
    user: settings.username,
    password: settings.password,
    passwordSource: settings.passwordSource,
  };
  const sql = createClient(settings, opts.overlapping ? POOL_SIZE : COMMAND_POOL_SIZE);
  try {
    let state = await probe(sql);
    if (state.version > PG_SCHEMA_VERSION) refuseNewer(state.version, ctx.location);
    if (state.version === 0 && !opts.create) {
      // Tables but no version: someone else's, or another process migrating right now (read again).
      if ((await existingSpoolctlTables(sql)).length > 0)
        state = { ...(await readSchemaState(sql)), offset: state.offset };
      if (state.version === 0) {
        const tables = await existingSpoolctlTables(sql);
        if (tables.length > 0) refuseForeign(ctx.location, tables);
        const offset = await measureClockOffset(sql);
        return new AbsentPgStore(sql, ctx, new QueueClock(sql, offset), opts.spoolDir);
      }
    }
    // migrate() re-reads the version under its lock, and refuses a foreign schema there.
    if (state.version < PG_SCHEMA_VERSION) {
      await migrate(sql, ctx.location);
      state = { ...(await readSchemaState(sql)), offset: state.offset };
    }
    const offset = state.offset ?? (await measureClockOffset(sql));
    return new PgStore(sql, ctx, new QueueClock(sql, offset), opts.spoolDir, state.queueId);
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {});
    throw mapPgError(ctx, error);
  }
}
