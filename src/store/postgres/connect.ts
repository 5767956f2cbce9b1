/**
 * Connecting to a PostgreSQL queue with Bun's built-in client, and measuring
 * the database's clock against this host's (Store.now(), docs "Clocks").
 */

import { SQL } from "bun";
import { hostNowMs } from "../host-clock.ts";
import type { PgConnectionSettings } from "./url.ts";

/**
 * Connections of a worker's pool: its loop, heartbeat and finishing jobs
 * overlap. LISTEN has its own. Bun's client opens a pool's connections
 * together at the first statement, so a process whose transactions never
 * overlap (every other verb) asks for {@link COMMAND_POOL_SIZE}: each
 * connection is a server process forked for it.
 */
export const POOL_SIZE = 3;
/** Connections of a one-shot command's pool (`add`, `status`, …): its transactions run one after another. */
export const COMMAND_POOL_SIZE = 1;
/** A lock wait longer than this fails the statement (55P03), reported as LOCKED like SQLite's busy timeout. */
const LOCK_TIMEOUT_MS = 5000;
/**
 * A session idle inside a transaction this long is ended by the server, so a
 * process stopped mid-transaction (SIGSTOP, a partition) does not hold row
 * locks for ever. Our transactions never wait on anything but the database,
 * so 20 s is generous, and it bounds how long such a stop holds back another
 * host's reap (docs/architecture.md "A stopped worker").
 */
const IDLE_IN_TRANSACTION_MS = 20_000;

/** A pooled client for `settings`. `max` connections at most, opened on demand. */
export function createClient(settings: PgConnectionSettings, max = POOL_SIZE): SQL {
  return new SQL({
    adapter: "postgres",
    hostname: settings.hostname,
    port: settings.port,
    username: settings.username,
    // An explicit "" would stop Bun from falling back; undefined lets the server not ask.
    ...(settings.password !== undefined ? { password: settings.password } : {}),
    database: settings.database,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    max,
    idleTimeout: 0,
    connectionTimeout: settings.connectTimeout,
    connection: {
      application_name: settings.applicationName,
      lock_timeout: `${LOCK_TIMEOUT_MS}ms`,
      idle_in_transaction_session_timeout: `${IDLE_IN_TRANSACTION_MS}ms`,
    },
  });
}

/** How often the clock offset is measured again, seconds. */
const CLOCK_REFRESH_SECONDS = 60;
/** A wall clock that moved this much more or less than the monotonic one was stepped (or suspended), milliseconds. */
const JUMP_MS = 1000;

/**
 * The database clock minus this host's, seconds, measured on a warm
 * connection: the server's time is taken at the midpoint of the round trip.
 */
export async function measureClockOffset(sql: SQL): Promise<number> {
  return (await measureClock(sql)).offset;
}

/** One measurement: the offset, and the database's time at `mono` (performance.now() at the midpoint). */
async function measureClock(sql: SQL): Promise<{ offset: number; dbSeconds: number; mono: number }> {
  const t0 = hostNowMs();
  const m0 = performance.now();
  const [row] = await sql`SELECT extract(epoch from clock_timestamp())::float8 AS db_now`;
  const t1 = hostNowMs();
  const m1 = performance.now();
  const dbSeconds = row.db_now as number;
  return { offset: dbSeconds - (t0 + t1) / 2000, dbSeconds, mono: (m0 + m1) / 2 };
}

/**
 * The queue's clock: the database's time at the last measurement plus the
 * time this process's monotonic clock has counted since (docs/architecture.md
 * "Clocks"). This host's wall clock is read only to measure: a step of it
 * (an NTP step, a manual `date -s`) moves no time the queue reads, so a
 * schedule slot is judged by the database's clock at the tick. Measured at
 * connect and again in the background every {@link CLOCK_REFRESH_SECONDS}
 * (a failed measurement keeps the last anchor).
 */
export class QueueClock {
  /** The database's time, epoch seconds, at {@link anchorMono}. */
  private anchorDb: number;
  /** performance.now() of the anchor, milliseconds. */
  private anchorMono = performance.now();
  /** This host's wall clock at the anchor, epoch milliseconds. */
  private anchorHost = hostNowMs();
  private refreshing = false;

  constructor(
    private readonly sql: SQL,
    offset: number,
  ) {
    this.anchorDb = hostNowMs() / 1000 + offset;
  }

  /**
   * Epoch seconds on the database's clock. A wall clock that moved otherwise
   * than the monotonic one since the anchor (a step; or a suspend, which the
   * monotonic clock does not count) is measured again at once.
   */
  now(): number {
    const mono = performance.now();
    const counted = mono - this.anchorMono;
    const jumped = Math.abs(hostNowMs() - this.anchorHost - counted) > JUMP_MS;
    if ((jumped || counted > CLOCK_REFRESH_SECONDS * 1000) && !this.refreshing) this.refresh();
    return this.anchorDb + counted / 1000;
  }

  /** The current offset, seconds (database minus this host's wall clock now: a step shows at once). */
  get skew(): number {
    return this.now() - hostNowMs() / 1000;
  }

  private refresh(): void {
    this.refreshing = true;
    measureClock(this.sql).then(
      (m) => {
        this.anchorDb = m.dbSeconds;
        this.anchorMono = m.mono;
        this.anchorHost = m.mono - performance.now() + hostNowMs();
        this.refreshing = false;
      },
      () => {
        // Try again a period later; the old anchor goes on counting.
        this.anchorDb += (performance.now() - this.anchorMono) / 1000;
        this.anchorMono = performance.now();
        this.anchorHost = hostNowMs();
        this.refreshing = false;
      },
    );
  }
}
