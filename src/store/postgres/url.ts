/**
 * PostgreSQL queue locations: recognising a `postgres://` URL, printing it
 * without its password ({@link redactUrl}), and turning it into the explicit
 * connection settings given to Bun's client ({@link parsePgUrl}).
 *
 * Bun's client is given every field explicitly, never the URL: it lets
 * `PGDATABASE` win over the database named in a URL (Bun 1.4.5), and it does
 * not read `~/.pgpass`. Fields the URL leaves out come from the libpq
 * variables as libpq does it (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
 * `PGPASSWORD`, then the password file: see pgpass.ts).
 */
import { SpoolError } from "../../contract/errors.ts";
import { passwordFromPassfile } from "./pgpass.ts";

/** URL schemes that select the PostgreSQL driver. */
export const PG_SCHEMES = ["postgres", "postgresql"] as const;

/** The scheme of a `scheme://…` location (lower case), or null for a file path. */
export function schemeOf(location: string): string | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(location);
  return m ? m[1]!.toLowerCase() : null;
}

/** Whether a location names a PostgreSQL database. */
export function isPgUrl(location: string): boolean {
  const scheme = schemeOf(location);
  return scheme !== null && (PG_SCHEMES as readonly string[]).includes(scheme);
}

/**
 * Splits what follows `scheme://` into the user info (before the `@` that
 * ends it) and the rest. The `@` is the last one before the query, or, when
 * there is none there, the last one at all: a password with an unencoded `/`,
 * `?`, `#` or `@` is still recognised as the password (and never printed).
 */
function splitUserinfo(rest: string): { info: string | null; after: string } {
  const query = rest.indexOf("?");
  let at = (query >= 0 ? rest.slice(0, query) : rest).lastIndexOf("@");
  if (at < 0) at = rest.lastIndexOf("@");
  return at < 0 ? { info: null, after: rest } : { info: rest.slice(0, at), after: rest.slice(at + 1) };
}

/**
 * The URL without its password, fit to print: the password of the user info
 * and a `password=` query parameter are dropped, everything else is kept as
 * written. Works on malformed URLs too (it never parses them).
 */
export function redactUrl(url: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)/.exec(url);
  if (!m) return url;
  const { info, after } = splitUserinfo(url.slice(m[1]!.length));
  let out = m[1]! + (info === null ? after : `${info.split(":")[0]}@${after}`);
  out = out.replace(/([?&])password=[^&#]*(&?)/gi, (_all, lead: string, tail: string) => (tail ? lead : ""));
  return out.replace(/[?&]$/, "");
}

/** Explicit connection settings for Bun's SQL client. */
export interface PgConnectionSettings {
  /** Host name, IP address, or a unix socket folder (starts with `/`). */
  hostname: string;
  port: number;
  username: string;
  database: string;
  /** undefined: none found (the server may not ask for one). */
  password: string | undefined;
  /** Where the password came from, for error messages (never the password). */
  passwordSource: "url" | "PGPASSWORD" | "passfile" | null;
  tls: "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full" | undefined;
  /** Seconds; default 10. */
  connectTimeout: number;
  applicationName: string;
}

const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
/** Query parameters understood (libpq names). */
const KNOWN_PARAMS = ["host", "port", "user", "password", "dbname", "sslmode", "connect_timeout", "application_name"];

function invalidUrl(url: string, why: string): SpoolError {
  return new SpoolError("INVALID_INPUT", `invalid PostgreSQL URL ${redactUrl(url)}: ${why}`, {
    remediation:
      "write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (the password is better kept in PGPASSWORD or ~/.pgpass)",
    detail: { url: redactUrl(url) },
  });
}

/** Percent-decodes one part of the URL; `what` names it in the error (never the password's value). */
function decode(url: string, part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalidUrl(url, `bad percent-encoding in the ${what}`);
  }
}

/**
 * Connection settings of a `postgres://` URL, with libpq's defaults from
 * `env` for what it leaves out and the password looked up as libpq does
 * (URL, `PGPASSWORD`, then `PGPASSFILE` or `~/.pgpass`). Raises `INVALID_INPUT`
 * for a malformed URL or an unknown query parameter.
 */
export function parsePgUrl(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: { lookupPassword?: boolean } = {},
): PgConnectionSettings {
  if (!isPgUrl(url)) throw invalidUrl(url, "not a postgres:// or postgresql:// URL");
  const { info: userinfo, after } = splitUserinfo(url.slice(url.indexOf("://") + 3));
  const info = userinfo ?? "";
  const hashAt = after.indexOf("#");
  const noHash = hashAt >= 0 ? after.slice(0, hashAt) : after;
  const queryAt = noHash.indexOf("?");
  const beforeQuery = queryAt >= 0 ? noHash.slice(0, queryAt) : noHash;
  const query = new URLSearchParams(queryAt >= 0 ? noHash.slice(queryAt + 1) : "");
  const slash = beforeQuery.indexOf("/");
  const hostPort = slash >= 0 ? beforeQuery.slice(0, slash) : beforeQuery;
  const path = slash >= 0 ? beforeQuery.slice(slash + 1) : "";

  for (const key of query.keys()) {
    if (!KNOWN_PARAMS.includes(key))
      throw invalidUrl(url, `unknown parameter ${JSON.stringify(key)} (known: ${KNOWN_PARAMS.join(", ")})`);
  }

  let user = "";
  let password: string | undefined;
  if (info) {
    const colon = info.indexOf(":");
    user = decode(url, colon >= 0 ? info.slice(0, colon) : info, "user name");
    if (colon >= 0) password = decode(url, info.slice(colon + 1), "password");
  }
  let host = "";
  let port = "";
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close < 0) throw invalidUrl(url, "unclosed [ in the host");
    host = hostPort.slice(1, close);
    const after = hostPort.slice(close + 1);
    if (after && !after.startsWith(":")) throw invalidUrl(url, "unexpected text after the IPv6 address");
    port = after.slice(1);
  } else if (hostPort.includes(",")) {
    throw invalidUrl(url, "several hosts are not supported");
  } else {
    const colon = hostPort.lastIndexOf(":");
    host = decode(url, colon >= 0 ? hostPort.slice(0, colon) : hostPort, "host");
    port = colon >= 0 ? hostPort.slice(colon + 1) : "";
  }
  host = query.get("host") ?? host;
  port = query.get("port") ?? port;
  user = query.get("user") ?? user;
  if (query.has("password")) password = query.get("password")!;
  let database = query.get("dbname") ?? decode(url, path, "database name");

  host ||= env.PGHOST || "localhost";
  port ||= env.PGPORT || "5432";
  user ||= env.PGUSER || safeOsUser() || "postgres";
  database ||= env.PGDATABASE || user;
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    throw invalidUrl(url, `bad port ${JSON.stringify(port)}`);

  let passwordSource: PgConnectionSettings["passwordSource"] = password !== undefined ? "url" : null;
  if (opts.lookupPassword === false) {
    // only where the server is (the spool folder's name): no password file read
  } else if (password === undefined && env.PGPASSWORD !== undefined) {
    password = env.PGPASSWORD;
    passwordSource = "PGPASSWORD";
  }
  if (password === undefined && opts.lookupPassword !== false) {
    // libpq matches a unix-socket connection against the host name "localhost".
    const fromFile = passwordFromPassfile(
      { host: host.startsWith("/") ? "localhost" : host, port: Number(port), database, user },
      env,
    );
    if (fromFile !== null) {
      password = fromFile;
      passwordSource = "passfile";
    }
  }

  const sslmode = query.get("sslmode") ?? env.PGSSLMODE;
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode))
    throw invalidUrl(url, `unknown sslmode ${JSON.stringify(sslmode)} (known: ${SSL_MODES.join(", ")})`);
  const timeout = query.get("connect_timeout") ?? env.PGCONNECT_TIMEOUT;
  const connectTimeout = timeout !== undefined && Number(timeout) > 0 ? Math.max(2, Number(timeout)) : 10;
  return {
    hostname: host,
    port: Number(port),
    username: user,
    database,
    password,
    passwordSource,
    tls: sslmode as PgConnectionSettings["tls"],
    connectTimeout,
    applicationName: query.get("application_name") ?? env.PGAPPNAME ?? "spoolctl",
  };
}

function safeOsUser(): string | null {
  try {
    // Loaded here, not at the top: this module is on every verb's start path (via location.ts).
    return (require("node:os") as typeof import("node:os")).userInfo().username || null;
  } catch {
    return null;
  }
}
