/**
 * Read-only checks of a PostgreSQL queue for `doctor` (the StoreCheck shape of
 * sqlite/inspect.ts): it connects, reads, and changes nothing (no migration,
 * no table created). Checks: `db_opens`, `server_version`, `schema_version`,
 * `clock_skew` (this host against the database), `connections` (headroom
 * under `max_connections`).
 */
import type { SQL } from "bun";
import type { StoreCheck } from "../../model/storage.ts";
import { createClient, measureClockOffset, POOL_SIZE } from "./connect.ts";
import { mapPgError } from "./errors.ts";
import { existingSpoolctlTables, PG_SCHEMA_VERSION, readSchemaState } from "./migrations.ts";
import { type PgConnectionSettings, parsePgUrl, redactUrl } from "./url.ts";

/** Oldest server the driver supports (gen_random_uuid, MATERIALIZED, transition tables). */
const MIN_SERVER_VERSION_NUM = 130000;
/** Clock skew above this is worth a warning, seconds. */
const SKEW_WARN_SECONDS = 1;
/** Warn when fewer than this share of max_connections is free. */
const HEADROOM_WARN = 0.2;

function check(
  id: string,
  status: StoreCheck["status"],
  message: string,
  remediation: string | null = null,
): StoreCheck {
  return { id, status, message, remediation };
}

const AFTER_OPEN = ["server_version", "schema_version", "clock_skew", "connections"];

/** The PostgreSQL driver's checks for `doctor`, read-only. */
export async function pgChecks(url: string): Promise<StoreCheck[]> {
  const where = redactUrl(url);
  let settings: PgConnectionSettings;
  try {
    settings = parsePgUrl(url);
  } catch (error) {
    return [
      check("db_opens", "fail", (error as Error).message, "fix the URL given with --db, SPOOLCTL_DB or db_path"),
      ...AFTER_OPEN.map((id) => check(id, "skip", "the database did not open")),
    ];
  }
  const sql = createClient(settings, 1);
  try {
    try {
      await sql`SELECT 1`;
    } catch (error) {
      const e = mapPgError(
        // The password's source too, so a refused one is named as refused (as `status` does), not as missing.
        {
          location: where,
          user: settings.username,
          password: settings.password,
          passwordSource: settings.passwordSource,
        },
        error,
      ) as Error & { remediation?: string };
      return [
        check("db_opens", "fail", e.message, e.remediation ?? null),
        ...AFTER_OPEN.map((id) => check(id, "skip", "the database did not open")),
      ];
    }
    const out: StoreCheck[] = [
      check(
        "db_opens",
        "pass",
        `connected to ${where} as ${settings.username}${settings.passwordSource ? ` (password from ${settings.passwordSource === "url" ? "the URL" : settings.passwordSource === "passfile" ? "the password file" : "PGPASSWORD"})` : ""}`,
      ),
    ];
    out.push(await serverVersion(sql));
    out.push(await schemaVersion(sql));
    out.push(await clockSkew(sql));
    out.push(await connections(sql));
    return out;
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {});
  }
}

async function serverVersion(sql: SQL): Promise<StoreCheck> {
  try {
    const [row] =
      await sql`SELECT current_setting('server_version') AS v, current_setting('server_version_num')::int AS n`;
    return row.n >= MIN_SERVER_VERSION_NUM
      ? check("server_version", "pass", `PostgreSQL ${row.v}`)
      : check(
          "server_version",
          "fail",
          `PostgreSQL ${row.v} is older than 13, the oldest spoolctl supports`,
          "upgrade the server to PostgreSQL 13 or newer",
        );
  } catch (error) {
    return check(
      "server_version",
      "fail",
      `cannot read the server version: ${(error as Error).message}`,
      "run: spoolctl doctor again; check the server's log",
    );
  }
}

async function schemaVersion(sql: SQL): Promise<StoreCheck> {
  const want = PG_SCHEMA_VERSION;
  try {
    const { version: v } = await readSchemaState(sql);
    if (v === 0) {
      const tables = await existingSpoolctlTables(sql);
      return tables.length > 0
        ? check(
            "schema_version",
            "fail",
            `not a spoolctl queue (tables: ${tables.slice(0, 5).join(", ")}, but no spoolctl schema version)`,
            "give the queue a database of its own (createdb), and pass its URL with --db",
          )
        : check(
            "schema_version",
            "skip",
            "no spoolctl schema in the database yet; the first write (spoolctl add) creates it",
          );
    }
    if (v === want) return check("schema_version", "pass", `schema version ${v}`);
    if (v > want)
      return check(
        "schema_version",
        "fail",
        `schema version ${v} is newer than this spoolctl understands (${want})`,
        "upgrade spoolctl: bunx spoolctl@latest",
      );
    return check(
      "schema_version",
      "warn",
      `schema version ${v}; the next spoolctl write migrates it to ${want}`,
      "run any write verb, e.g. spoolctl work --once",
    );
  } catch (error) {
    return check(
      "schema_version",
      "fail",
      `schema version unreadable: ${(error as Error).message}`,
      "pass the URL of a spoolctl queue with --db",
    );
  }
}

async function clockSkew(sql: SQL): Promise<StoreCheck> {
  try {
    const skew = await measureClockOffset(sql);
    const abs = Math.abs(skew);
    const text = abs < 1 ? `${Math.max(1, Math.round(abs * 1000))} ms` : `${abs.toFixed(1)} s`;
    const side = skew > 0 ? "behind" : "ahead of";
    return abs <= SKEW_WARN_SECONDS
      ? check("clock_skew", "pass", `this host's clock is within ${text} of the database's`)
      : check(
          "clock_skew",
          "warn",
          `this host's clock is ${text} ${side} the database's`,
          "synchronise this host's clock (chrony, systemd-timesyncd); leases and due times use the database's clock, but local times shown and --at use this host's",
        );
  } catch (error) {
    return check(
      "clock_skew",
      "fail",
      `cannot read the database's clock: ${(error as Error).message}`,
      "run: spoolctl doctor again",
    );
  }
}

async function connections(sql: SQL): Promise<StoreCheck> {
  try {
    const [row] = await sql`SELECT current_setting('max_connections')::int AS max,
        current_setting('superuser_reserved_connections')::int AS reserved,
        (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS used`;
    const usable = row.max - row.reserved;
    const free = usable - row.used;
    const message = `${row.used} of ${usable} connections in use (max_connections ${row.max}, ${row.reserved} reserved); each worker holds up to ${POOL_SIZE + 1}`;
    return free >= row.max * HEADROOM_WARN
      ? check("connections", "pass", message)
      : check(
          "connections",
          "warn",
          `${message}: ${free} left`,
          "raise max_connections on the server, or run fewer workers (a connection pooler in session mode also works)",
        );
  } catch (error) {
    return check("connections", "warn", `cannot count connections: ${(error as Error).message}`, null);
  }
}
