/**
 * Connecting to a PostgreSQL queue with Bun's built-in client, and measuring
 * the database's clock against this host's (Store.now(), docs "Clocks").
 */
import { SQL } from "bun";
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
 * locks for ever. Our transactions never wait on anything but the database.
 */
const IDLE_IN_TRANSACTION_MS = 60_000;

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

/**
 * The database clock minus this host's, seconds, measured on a warm
 * connection: the server's time is taken at the midpoint of the round trip.
 */
export async function measureClockOffset(sql: SQL): Promise<number> {
  const t0 = Date.now();
  const [row] = await sql`SELECT extract(epoch from clock_timestamp())::float8 AS db_now`;
  const t1 = Date.now();
  return (row.db_now as number) - (t0 + t1) / 2000;
}

/**
 * The queue's clock: this host's clock plus the offset to the database's,
 * measured at connect and again in the background every
 * {@link CLOCK_REFRESH_SECONDS} (a failed measurement keeps the last offset).
 */
export class QueueClock {
  private measuredAt = Date.now();
  private refreshing = false;

  constructor(
    private readonly sql: SQL,
    private offset: number,
  ) {}

  /** Epoch seconds on the database's clock. */
  now(): number {
    const local = Date.now();
    if (local - this.measuredAt > CLOCK_REFRESH_SECONDS * 1000 && !this.refreshing) this.refresh();
    return local / 1000 + this.offset;
  }

  /** The current offset, seconds (database minus this host). */
  get skew(): number {
    return this.offset;
  }

  private refresh(): void {
    this.refreshing = true;
    measureClockOffset(this.sql).then(
      (offset) => {
        this.offset = offset;
        this.measuredAt = Date.now();
        this.refreshing = false;
      },
      () => {
        this.measuredAt = Date.now(); // try again a period later
        this.refreshing = false;
      },
    );
  }
}
