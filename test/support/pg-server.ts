/**
 * A throwaway PostgreSQL server for tests.
 *
 * `startPgServer()` makes a temp folder, runs `initdb` there (as the `postgres`
 * OS user when we are root: PostgreSQL refuses to run as root), starts the
 * server on a free port of 127.0.0.1 with durability off (fsync,
 * synchronous_commit and full_page_writes off: a test database needs no crash
 * safety) and trust authentication, and waits until it answers a query.
 *
 * `pgDatabaseForTest(fileTag)` is what test files use: every file of one
 * `bun test` run (one process) shares ONE server, started lazily by the first
 * caller, and each call gets a fresh database of its own. The server is
 * stopped when the process exits. With `SPOOLCTL_TEST_PG_URL` set (the admin
 * URL of a server you already run) no server is started: the databases are
 * created there and dropped at exit.
 *
 * ```ts
 * import { pgDatabaseForTest } from "./support/pg-server";
 * let url: string;
 * beforeAll(async () => { url = await pgDatabaseForTest(import.meta.file); }, 60_000);
 * ```
 *
 * Environment:
 *  - SPOOLCTL_TEST_PG_URL: use this server (an admin URL, e.g.
 *    postgres://postgres@127.0.0.1:5432/postgres) instead of starting one.
 *  - SPOOLCTL_TEST_PG_BIN: folder that holds initdb and pg_ctl (else PATH, then
 *    the newest /usr/lib/postgresql/N/bin).
 *  - SPOOLCTL_TEST_PG_KEEP=1: keep the temp folder (data and server.log) and,
 *    with SPOOLCTL_TEST_PG_URL, the databases, for a post-mortem.
 *
 * Bun's SQL client takes PGDATABASE over the database named in a URL, so this
 * module removes PGDATABASE from process.env when it is loaded: otherwise every
 * client would open the same database whatever URL it was given.
 */

import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { SQL } from "bun";

/** A running throwaway server. */
export interface PgServer {
  /** postgres:// URL of database `dbName` on this server (user postgres, no password, sslmode=disable). */
  url(dbName: string): string;
  /** Creates database `name` (an identifier, quoted for you) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and removes its folder. Safe to call more than once. */
  stop(): Promise<void>;
  /** TCP port on 127.0.0.1. */
  readonly port: number;
  /** The temp folder: data/, server.log and the unix socket. */
  readonly dir: string;
  /** Stops the server at once (pg_ctl -m immediate) and removes the folder, synchronously: for process "exit" hooks. */
  stopSync(): void;
  /** Restarts the server in place (connections are cut; data kept): `fast` (clean) or `immediate` (as after a crash). */
  restart(mode?: "fast" | "immediate"): Promise<void>;
}

export interface StartPgServerOptions {
  /** Folder with initdb and pg_ctl; default: $SPOOLCTL_TEST_PG_BIN, PATH, newest /usr/lib/postgresql/N/bin. */
  binDir?: string;
  /** Seconds to wait for the server to accept connections (default 60). */
  startTimeoutSec?: number;
  /** Server settings that override the defaults (e.g. `{ max_connections: "4" }` for a server that runs out of slots). */
  settings?: Record<string, string>;
}

// Bun's SQL prefers PGDATABASE to the database in a URL (see the header).
delete process.env.PGDATABASE;

const PG_OPTIONS = [
  "fsync=off",
  "synchronous_commit=off",
  "full_page_writes=off",
  "listen_addresses='127.0.0.1'",
  "max_connections=200",
];

/** Where initdb and pg_ctl are, or an error saying what is missing. */
function findPgBinDir(binDir?: string): string {
  const has = (dir: string) => ["initdb", "pg_ctl", "postgres"].every((b) => existsSync(join(dir, b)));
  const explicit = binDir ?? process.env.SPOOLCTL_TEST_PG_BIN;
  if (explicit) {
    if (has(explicit)) return explicit;
    const missing = ["initdb", "pg_ctl", "postgres"].filter((b) => !existsSync(join(explicit, b)));
    throw new Error(`PostgreSQL server binaries not found: ${missing.join(", ")} missing in ${explicit}`);
  }
  // PATH first. Debian's /usr/local/bin or /usr/bin entries are symlinks into
  // /usr/lib/postgresql/N/bin, and postgres must come from the same folder.
  const onPath = Bun.which("initdb");
  if (onPath) {
    const dir = dirname(realpathSync(onPath));
    if (has(dir)) return dir;
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+(\.\d+)?$/.test(v) && has(join(root, v, "bin")))
        .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    : [];
  if (versions[0]) return join(root, versions[0], "bin");
  throw new Error(
    "PostgreSQL server binaries not found: no initdb on PATH and no /usr/lib/postgresql/*/bin with initdb, pg_ctl and postgres. " +
      "Install them (Debian: apt-get install -y postgresql), point SPOOLCTL_TEST_PG_BIN at their folder, " +
      "or set SPOOLCTL_TEST_PG_URL to an existing server's admin URL.",
  );
}

/** How to run a PostgreSQL binary: as the postgres OS user when we are root, else as ourselves. */
interface RunAs {
  /** Command prefix, e.g. ["runuser", "-u", "postgres", "--"]; empty when we are not root. */
  wrap(argv: string[]): string[];
  uid: number;
  gid: number;
}

function resolveRunAs(): RunAs {
  const uid = process.getuid?.() ?? -1;
  if (uid !== 0) {
    // initdb and postgres run fine as any non-root user: run them as ourselves.
    return { wrap: (argv) => argv, uid, gid: process.getgid?.() ?? -1 };
  }
  const ids = Bun.spawnSync(["id", "-u", "postgres"], { stdout: "pipe", stderr: "pipe" });
  const gids = Bun.spawnSync(["id", "-g", "postgres"], { stdout: "pipe", stderr: "pipe" });
  if (ids.exitCode !== 0 || gids.exitCode !== 0) {
    throw new Error(
      "cannot start a test PostgreSQL server: running as root, and there is no 'postgres' OS user to run initdb/postgres as " +
        "(PostgreSQL refuses to run as root). Create it (Debian's postgresql package does: apt-get install -y postgresql; " +
        "or useradd --system --home /var/lib/postgresql postgres), or set SPOOLCTL_TEST_PG_URL to an existing server.",
    );
  }
  const pgUid = Number(ids.stdout.toString().trim());
  const pgGid = Number(gids.stdout.toString().trim());
  if (Bun.which("runuser"))
    return { wrap: (argv) => ["runuser", "-u", "postgres", "--", ...argv], uid: pgUid, gid: pgGid };
  if (Bun.which("su"))
    return {
      wrap: (argv) => ["su", "postgres", "-s", "/bin/sh", "-c", argv.map(shQuote).join(" ")],
      uid: pgUid,
      gid: pgGid,
    };
  throw new Error(
    "cannot start a test PostgreSQL server: running as root and neither runuser nor su is available to switch to the postgres user",
  );
}

function shQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Env for the server processes: no PG* variables from the caller (PGPORT, PGDATA… would steer them). */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("PG")) env[k] = v;
  env.LC_ALL = "C";
  return env;
}

async function run(argv: string[], what: string): Promise<string> {
  const spawn = () => Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: cleanEnv() });
  let proc: ReturnType<typeof spawn>;
  try {
    proc = spawn();
  } catch (e) {
    throw new Error(`${what}: cannot run ${argv[0]}: ${(e as Error).message}`);
  }
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${argv.join(" ")}\n${(out + err).trim()}`);
  return out + err;
}

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no server log)";
  }
}

/** Starts a throwaway server. Throws an error that says what is missing when the machine cannot run one. */
export async function startPgServer(opts: StartPgServerOptions = {}): Promise<PgServer> {
  const bin = findPgBinDir(opts.binDir);
  const runAs = resolveRunAs();
  const timeoutSec = opts.startTimeoutSec ?? 60;

  const dir = mkdtempSync(join(tmpdir(), "spoolctl-pg-"));
  const cleanupDir = () => {
    if (process.env.SPOOLCTL_TEST_PG_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
  };
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const pgCtl = join(bin, "pg_ctl");
  try {
    if (runAs.uid >= 0 && (process.getuid?.() ?? -1) === 0) chownSync(dir, runAs.uid, runAs.gid);
    const probe = Bun.spawnSync(runAs.wrap(["test", "-w", dir]), { stdout: "pipe", stderr: "pipe" });
    if (probe.exitCode !== 0) {
      throw new Error(
        `cannot start a test PostgreSQL server: the postgres user cannot write ${dir} (its parent folders must be searchable by that user; ` +
          `set TMPDIR to a folder such as /tmp). ${probe.stderr.toString().trim()}`,
      );
    }
    await run(
      runAs.wrap([
        join(bin, "initdb"),
        "-D",
        data,
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ]),
      "initdb",
    );
  } catch (e) {
    cleanupDir();
    throw e;
  }

  // Start on a free port; another process may grab it between our probe and
  // the server's bind, so try a few ports.
  let port = 0;
  let started = false;
  let lastError: unknown;
  for (let attempt = 0; attempt < 3 && !started; attempt++) {
    port = freePort();
    const overrides = Object.entries(opts.settings ?? {}).map(([k, v]) => `${k}=${v}`);
    const kept = PG_OPTIONS.filter((c) => !(c.split("=")[0]! in (opts.settings ?? {})));
    const o = [...kept, ...overrides, `port=${port}`, `unix_socket_directories='${dir}'`]
      .map((c) => `-c ${c}`)
      .join(" ");
    try {
      await run(
        runAs.wrap([pgCtl, "-D", data, "-l", log, "-w", "-t", String(timeoutSec), "-o", o, "start"]),
        "pg_ctl start",
      );
      started = true;
    } catch (e) {
      lastError = e;
      // Make sure a half-started server is gone before the next port.
      Bun.spawnSync(runAs.wrap([pgCtl, "-D", data, "-m", "immediate", "-w", "stop"]), {
        stdout: "ignore",
        stderr: "ignore",
        env: cleanEnv(),
      });
    }
  }
  if (!started) {
    cleanupDir();
    throw new Error(`${(lastError as Error).message}\n--- server.log ---\n${tail(log)}`);
  }

  // sslmode=disable: this server has no TLS, and a PGSSLMODE in the caller's
  // environment (which Bun's SQL reads next to a URL) must not ask for it.
  const url = (dbName: string) => `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(dbName)}?sslmode=disable`;

  // A watchdog that stops the server once this process is gone without having
  // stopped it: it polls our pid, detached into its own session. Under
  // `bun test` this is what ends the shared server, because bun test (1.4.5)
  // does not run process.on("exit") listeners (only for node:test files or
  // with BUN_TEST_DRAIN_EVENT_LOOP=1); it also covers SIGKILL and crashes.
  const stopCmd = runAs.wrap([pgCtl, "-D", data, "-m", "immediate", "-w", "stop"]).map(shQuote).join(" ");
  const rmCmd = process.env.SPOOLCTL_TEST_PG_KEEP === "1" ? "true" : `rm -rf ${shQuote(dir)}`;
  let watchdog: ReturnType<typeof Bun.spawn> | undefined;
  try {
    watchdog = Bun.spawn(
      [
        "sh",
        "-c",
        `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ${stopCmd} >/dev/null 2>&1; ${rmCmd}`,
      ],
      {
        stdio: ["ignore", "ignore", "ignore"],
        detached: true,
        env: cleanEnv(),
      },
    );
    watchdog.unref();
  } catch {
    watchdog = undefined; // best effort
  }

  // Wait until it answers a query (pg_ctl -w already waited for "ready").
  const deadline = performance.now() + timeoutSec * 1000;
  for (;;) {
    const sql = new SQL(url("postgres"), { max: 1, connectionTimeout: 5 });
    try {
      await sql`select 1`;
      break;
    } catch (e) {
      if (performance.now() > deadline) {
        watchdog?.kill();
        Bun.spawnSync(runAs.wrap([pgCtl, "-D", data, "-m", "immediate", "-w", "stop"]), {
          stdout: "ignore",
          stderr: "ignore",
          env: cleanEnv(),
        });
        cleanupDir();
        throw new Error(
          `test PostgreSQL server on port ${port} did not accept connections within ${timeoutSec}s: ${(e as Error).message}\n--- server.log ---\n${tail(log)}`,
        );
      }
      await Bun.sleep(50);
    } finally {
      await sql.close({ timeout: 0 });
    }
  }

  let stopping: Promise<void> | undefined;
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    watchdog?.kill();
    Bun.spawnSync(runAs.wrap([pgCtl, "-D", data, "-m", "immediate", "-w", "stop"]), {
      stdout: "ignore",
      stderr: "ignore",
      env: cleanEnv(),
    });
    cleanupDir();
  };

  return {
    port,
    dir,
    url,
    async createDatabase(name: string): Promise<string> {
      await createDatabaseAt(url("postgres"), name);
      return url(name);
    },
    stop(): Promise<void> {
      stopping ??= (async () => {
        if (stopped) return;
        stopped = true;
        watchdog?.kill();
        try {
          await run(runAs.wrap([pgCtl, "-D", data, "-m", "fast", "-w", "stop"]), "pg_ctl stop");
        } catch {
          Bun.spawnSync(runAs.wrap([pgCtl, "-D", data, "-m", "immediate", "-w", "stop"]), {
            stdout: "ignore",
            stderr: "ignore",
            env: cleanEnv(),
          });
        }
        cleanupDir();
      })();
      return stopping;
    },
    stopSync,
    async restart(mode: "fast" | "immediate" = "fast"): Promise<void> {
      // pg_ctl restart starts the server again with the options it was started with.
      await run(
        runAs.wrap([pgCtl, "-D", data, "-l", log, "-m", mode, "-w", "-t", String(timeoutSec), "restart"]),
        "pg_ctl restart",
      );
    },
  };
}

/** CREATE DATABASE `name` through the admin URL `adminUrl`. */
async function createDatabaseAt(adminUrl: string, name: string): Promise<void> {
  if (!name || Buffer.byteLength(name) > 63)
    throw new Error(`database name must be 1..63 bytes: ${JSON.stringify(name)}`);
  const sql = new SQL(adminUrl, { max: 1, connectionTimeout: 10 });
  try {
    await sql.unsafe(`CREATE DATABASE ${quoteIdent(name)}`);
  } finally {
    await sql.close({ timeout: 0 });
  }
}

/** `adminUrl` with its database replaced by `name`. */
function withDatabase(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

// ---------------------------------------------------------------------------
// One server per process, one database per caller.

let shared: Promise<PgServer> | undefined;
let counter = 0;
/** With SPOOLCTL_TEST_PG_URL: file listing the databases we made there, read by the drop-at-exit watchdog. */
let externalList: string | undefined;

/**
 * The process-wide server, started on first use and stopped at process exit:
 * by the "exit" listener where the runtime calls it (`bun run`, node), else by
 * the server's watchdog within half a second of the process ending (`bun test`
 * 1.4.5 skips "exit" listeners). A failed start is remembered: every later
 * caller gets the same error at once.
 */
export function sharedPgServer(): Promise<PgServer> {
  if (!shared) {
    shared = startPgServer().then((server) => {
      process.on("exit", () => server.stopSync());
      return server;
    });
  }
  return shared;
}

/** A database name for `fileTag` that is unique across processes: t_<tag>_<pid>_<n>_<random>. */
function databaseName(fileTag: string): string {
  const tag = basename(fileTag)
    .replace(/\.(test|spec)?\.?[cm]?[jt]sx?$/i, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 30);
  const rand = Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, "0");
  return `t_${tag || "db"}_${process.pid}_${++counter}_${rand}`;
}

/**
 * A fresh, empty database for one test file, on the shared server (or on
 * SPOOLCTL_TEST_PG_URL's server); returns its postgres:// URL.
 *
 * @param fileTag names the database so a leftover one can be traced back,
 * e.g. `import.meta.file`
 */
export async function pgDatabaseForTest(fileTag: string): Promise<string> {
  const name = databaseName(fileTag);
  const external = process.env.SPOOLCTL_TEST_PG_URL;
  if (external) {
    await createDatabaseAt(external, name);
    if (!externalList) externalList = startDropWatchdog(external);
    appendFileSync(externalList, `${name}\n`);
    return withDatabase(external, name);
  }
  const server = await sharedPgServer();
  return server.createDatabase(name);
}

/**
 * With SPOOLCTL_TEST_PG_URL: a detached watchdog that, once this process is
 * gone, drops the databases listed in the returned file (a child bun does the
 * DROPs). A watchdog rather than an "exit" listener, which bun test skips.
 */
function startDropWatchdog(adminUrl: string): string {
  const list = join(mkdtempSync(join(tmpdir(), "spoolctl-pgdbs-")), "databases");
  writeFileSync(list, "");
  if (process.env.SPOOLCTL_TEST_PG_KEEP === "1") return list;
  const script = `
    const { SQL } = require("bun");
    const fs = require("node:fs");
    const names = fs.readFileSync(process.env.DB_LIST, "utf8").split("\\n").filter(Boolean);
    const sql = new SQL(process.env.ADMIN_URL, { max: 1, connectionTimeout: 5 });
    for (const name of names) {
      await sql.unsafe('DROP DATABASE IF EXISTS "' + name.replace(/"/g, '""') + '" WITH (FORCE)').catch((e) => console.error(String(e)));
    }
    await sql.close({ timeout: 0 });
    fs.rmSync(require("node:path").dirname(process.env.DB_LIST), { recursive: true, force: true });
  `;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ADMIN_URL: adminUrl,
    DB_LIST: list,
    DROP_SCRIPT: script,
  };
  try {
    const w = Bun.spawn(
      [
        "sh",
        "-c",
        `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; exec ${shQuote(process.execPath)} -e "$DROP_SCRIPT"`,
      ],
      {
        stdio: ["ignore", "ignore", "ignore"],
        detached: true,
        env,
      },
    );
    w.unref();
  } catch {
    // best effort: the databases stay
  }
  return list;
}
