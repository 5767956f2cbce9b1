/**
 * PostgreSQL failures as the {@link SpoolError}s they mean. Bun's client puts
 * the SQLSTATE of a server error in `errno` (its `code` is always
 * `ERR_POSTGRES_SERVER_ERROR`) and names client-side failures in `code`
 * (`ERR_POSTGRES_CONNECTION_REFUSED`, `…_CLOSED`, …).
 *
 * A database that cannot be reached (refused, lost, shut down) is `INTERNAL`
 * with `detail.storage = "unreachable"`: a
 * condition a worker waits out as it does a full disk, not `LOCKED` (nobody
 * holds a lock; retrying in a moment is not what helps). Lock waits past
 * `lock_timeout` and conflicts still failing after the driver's retries are
 * `LOCKED` (exit 4), as SQLITE_BUSY is, and so are a server out of
 * connection slots (53300) and one starting up (57P03): they pass by
 * themselves, like a lock.
 */
import { SQL } from "bun";
import { SpoolError } from "../../contract/errors.ts";

/** Client-side codes of a connection that failed or went away. */
const CONNECTION_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOENT", // a unix socket that is not there: the server is down
]);

/** Plain words for Bun's terse connection failures ("Failed to connect"). */
const CONNECTION_WORDS: Record<string, string> = {
  ERR_POSTGRES_CONNECTION_REFUSED: "could not connect (refused, or the host name did not resolve)",
  ERR_POSTGRES_CONNECTION_TIMEOUT: "connection timed out",
  ERR_POSTGRES_CONNECTION_CLOSED: "connection closed",
  ERR_POSTGRES_CONNECTION_FAILED: "connection failed",
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host name not found",
};

/**
 * What to do when the database cannot be reached, for any verb; `work` adds
 * how a worker rides the outage out (src/commands/work.ts).
 */
const UNREACHABLE_REMEDIATION =
  "check that the PostgreSQL server is running and reachable from this host (spoolctl doctor)";

/**
 * Refusals that pass by themselves (docs/architecture.md "Contention"): the
 * server turns a connection away before anything runs. They are `LOCKED`
 * (exit 4, retryable), ridden out like a held lock by `add`, `status` and
 * workers, not `INTERNAL`.
 */
const REFUSALS: Record<string, { why: string; remediation: string }> = {
  "53300": {
    why: "every connection slot is taken",
    remediation:
      "retry in a moment; if it persists, the server's max_connections is too low for its clients (SHOW max_connections; SELECT count(*) FROM pg_stat_activity)",
  },
  "57P03": {
    why: "the server is starting up or shutting down",
    remediation: "retry in a moment, once the server accepts connections",
  },
};

/** The SQLSTATE of a server error, or null. */
export function sqlstate(error: unknown): string | null {
  const errno = (error as { errno?: unknown })?.errno;
  return typeof errno === "string" && /^[0-9A-Z]{5}$/.test(errno) ? errno : null;
}

function clientCode(error: unknown): string | null {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : null;
}

/** Whether the connection failed or was lost (the statement's outcome is unknown if it was a COMMIT). */
export function isConnectionError(error: unknown): boolean {
  const state = sqlstate(error);
  if (state !== null)
    return (
      state.startsWith("08") ||
      state === "57P01" ||
      state === "57P02" ||
      state === "57P03" ||
      state === "53300" ||
      isSessionTimeout(error)
    );
  const code = clientCode(error);
  return code !== null && CONNECTION_CODES.has(code);
}

/**
 * The server ended the session because its transaction sat idle too long
 * (25P03, `idle_in_transaction_session_timeout`: a process stopped inside a
 * transaction, SIGSTOP or Ctrl-Z). The transaction was rolled back for
 * certain, even when this answers its COMMIT, so it may be run again.
 */
export function isSessionTimeout(error: unknown): boolean {
  return sqlstate(error) === "25P03";
}

/** Serialization failure or deadlock: the transaction was rolled back and may simply be run again. */
export function isConflict(error: unknown): boolean {
  const state = sqlstate(error);
  return state === "40001" || state === "40P01";
}

/**
 * A unique violation of the one-active-job-per-key index (two `add --key` at
 * once): run again, the callback finds the other's job.
 */
export function isActiveKeyViolation(error: unknown): boolean {
  return sqlstate(error) === "23505" && (error as { constraint?: unknown }).constraint === "idx_jobs_active_key";
}

/** The message of a driver error, with `secret` (the password) blanked should it ever appear. */
function messageOf(error: unknown, secret: string | undefined): string {
  let message = (error as Error)?.message ?? String(error);
  if (secret) message = message.split(secret).join("***");
  return message;
}

/** Where the error is being raised: `location` is the redacted URL. */
export interface ErrorContext {
  location: string;
  user: string;
  password?: string;
  /** Where the password came from (never its value), to say which one the server refused. */
  passwordSource?: "url" | "PGPASSWORD" | "passfile" | null;
}

/** Whether an error comes from the driver (Bun's SQL client), not from a caller's callback. */
export function isDriverError(error: unknown): boolean {
  return error instanceof SQL.SQLError || isConnectionError(error);
}

/**
 * A driver error as the {@link SpoolError} it means; a SpoolError, and any
 * error that is not the driver's (a bug in a callback), is returned unchanged.
 */
export function mapPgError(ctx: ErrorContext, error: unknown): unknown {
  if (error instanceof SpoolError || !isDriverError(error)) return error;
  const state = sqlstate(error);
  const code = clientCode(error);
  const driverCode = state ?? code;
  const message = messageOf(error, ctx.password);
  const at = ctx.location;
  const refusal = REFUSALS[state ?? ""];
  if (refusal) {
    // Nothing ran: the server turned the connection away before any statement, so trying again is exact.
    return new SpoolError(
      "LOCKED",
      `the queue's database at ${at} turned the connection away for now: ${refusal.why} (${state}: ${message})`,
      {
        remediation: refusal.remediation,
        detail: { driver_code: state, refused: true },
      },
    );
  }
  if (code === "ERR_POSTGRES_CONNECTION_TIMEOUT") {
    // Not connected within connect_timeout: no statement was sent, so trying again is exact, as for
    // a refusal. A loaded server (many clients connecting at once) is busy, not gone.
    return new SpoolError(
      "LOCKED",
      `the queue's database at ${at} did not accept a connection in time (connect_timeout): it is busy or unreachable`,
      {
        remediation:
          "retry in a moment; if it persists, check that the server is up and reachable (spoolctl doctor), or raise connect_timeout in the URL",
        detail: { driver_code: code, refused: true },
      },
    );
  }
  if (isConnectionError(error)) {
    const plain = code !== null ? CONNECTION_WORDS[code] : undefined; // Bun says only "Failed to connect"
    const why = plain
      ? /^(failed to connect|connection closed)\.?$/i.test(message)
        ? plain
        : `${plain}: ${message}`
      : message;
    // Refused or unresolved: the server is not there now (another try may find it), not a fault of spoolctl.
    return new SpoolError("UNREACHABLE", `cannot reach the queue's database at ${at}: ${why}`, {
      remediation: UNREACHABLE_REMEDIATION,
      detail: { storage: "unreachable", driver_code: driverCode },
    });
  }
  if (isConflict(error) || state === "55P03" || state === "57014") {
    return new SpoolError(
      "LOCKED",
      `the queue's database at ${at} stayed locked by other writers (${state}: ${message})`,
      {
        remediation:
          "retry in a moment; if it persists, look for a long transaction on the database (pg_stat_activity)",
        detail: { driver_code: driverCode },
      },
    );
  }
  if (state === "53100") {
    return new SpoolError("INTERNAL", `the disk of the queue's database at ${at} is full: ${message}`, {
      remediation: "free some space on the database server; nothing was written",
      detail: { storage: "full", driver_code: state },
    });
  }
  if (state !== null && (state.startsWith("58") || state.startsWith("53") || state === "XX001" || state === "XX002")) {
    return new SpoolError("INTERNAL", `the queue's database at ${at} failed: ${message} (${state})`, {
      remediation: "check the database server (disk, memory, its log); then run: spoolctl doctor",
      detail: { storage: "io", driver_code: state },
    });
  }
  if (state === "25006") {
    return new SpoolError(
      "INTERNAL",
      `the queue's database at ${at} is read-only (a standby, or a failover in progress): ${message}`,
      {
        remediation: "point --db at the primary server; a worker waits and retries",
        detail: { storage: "read_only", driver_code: state },
      },
    );
  }
  if (state === "28P01" || state === "28000") {
    // 28000 is also an unknown role: no password helps there.
    const noRole = /role ".*" does not exist/.test(message);
    return new SpoolError("INTERNAL", `PostgreSQL refused the login of user ${ctx.user} at ${at}: ${message}`, {
      remediation: noRole
        ? `check the user name in the URL (postgres://USER@HOST/DB), or create the role on the server (createuser ${ctx.user}, or CREATE ROLE "${ctx.user.replaceAll('"', '""')}" LOGIN)`
        : ctx.passwordSource
          ? `the password from ${ctx.passwordSource === "url" ? "the URL" : ctx.passwordSource === "PGPASSWORD" ? "PGPASSWORD" : "~/.pgpass"} was refused: check it (PGPASSWORD or ~/.pgpass, mode 0600, keep it out of the URL), or the server's pg_hba.conf`
          : "no password was given: put it in PGPASSWORD or ~/.pgpass (host:port:database:user:password, mode 0600), or check the server's pg_hba.conf",
      detail: { driver_code: state },
    });
  }
  if (state === "3D000") {
    return new SpoolError("INTERNAL", `the database of ${at} does not exist: ${message}`, {
      remediation: "create it first (createdb, or CREATE DATABASE), then run spoolctl again",
      detail: { driver_code: state },
    });
  }
  if (state === "42501") {
    return new SpoolError("INTERNAL", `user ${ctx.user} may not do this on the queue's database at ${at}: ${message}`, {
      remediation:
        "grant the user the rights on the queue's tables (or CREATE on its schema to create the queue), or connect as their owner",
      detail: { driver_code: state },
    });
  }
  if (state === "22021" || state === "22P05") {
    return new SpoolError("INVALID_INPUT", `PostgreSQL cannot store a NUL byte (\\0) in text: ${message}`, {
      remediation: "remove NUL bytes from the job's fields (note, tags, key)",
      detail: { driver_code: state },
    });
  }
  return new SpoolError(
    "INTERNAL",
    `the queue's database at ${at} failed: ${message}${driverCode ? ` (${driverCode})` : ""}`,
    {
      remediation: "run: spoolctl doctor; report the message if it persists",
      detail: { driver_code: driverCode },
    },
  );
}
