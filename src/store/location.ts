/**
 * Where the queue lives (docs/architecture.md "Location"): `--db` > `SPOOLCTL_DB` >
 * `db_path` in `.spoolctl/config.json` (relative to that file) > `./.spoolctl/queue.db`.
 *
 * Each of them may also be a `postgres://` or `postgresql://` URL (a queue
 * shared by several hosts): it is kept as is, never resolved as a path; any
 * other `scheme://` is refused. A URL's spool folder is local to this host:
 * `$XDG_STATE_HOME/spoolctl/pg-HOST-PORT-DATABASE-HASH.spool` (default
 * `~/.local/state/spoolctl/…`), HASH naming the server and database.
 */
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { SpoolError } from "../contract/errors.ts";
import { CONFIG_FILE, CONFIG_FILE_MAX_BYTES, CONFIG_KEYS, type DbPathSource } from "../model/location.ts";
import { foreignOwner } from "./ownership.ts";
import { isPgUrl, PG_SCHEMES, parsePgUrl, redactUrl, schemeOf } from "./postgres/url.ts";
import { formatBytes, readBounded } from "./read-bounded.ts";

/** A place in a text: 1-based line and column (columns count UTF-16 code units). */
export interface TextPosition {
  line: number;
  column: number;
}

/**
 * Where `text` stops being valid JSON (RFC 8259: no comments, no trailing
 * commas), as a line and column, or null when it is valid. Bun's `JSON.parse`
 * errors name no position, and a person fixing `.spoolctl/config.json` needs
 * one. jsonc-parser is loaded only here, after `JSON.parse` failed, so no
 * command pays for it at start-up. Never throws.
 */
export function jsonErrorPosition(text: string): TextPosition | null {
  const { parse } = require("jsonc-parser") as typeof import("jsonc-parser");
  const errors: import("jsonc-parser").ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return null;
  const before = text.slice(0, first.offset).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/**
 * A resolved location: database file and its spool folder, both absolute. For
 * a PostgreSQL queue `dbPath` is the URL without its password (fit to print:
 * `config`, `doctor`) and `url` the URL as given, which only the driver reads.
 */
export interface QueueLocation {
  dbPath: string;
  spoolDir: string;
  source: DbPathSource;
  /** `.spoolctl/` folders passed over on the way (another user's: {@link findProject}); absent when none. */
  untrusted?: UntrustedProjectDir[];
  /** The full `postgres://` URL, password included; absent for a SQLite file. */
  url?: string;
}

/** Full URLs by their printable form, for callers handed `dbPath` only (doctor's diagnoseQueue). */
const fullUrls = new Map<string, string>();

/**
 * The URL to connect with for a location string: the full URL that
 * {@link resolveLocation} saw for this printable form in this process, else
 * the string itself (a URL without password, or a path).
 */
export function connectionUrlFor(dbPath: string): string {
  return fullUrls.get(dbPath) ?? dbPath;
}

/**
 * Refuses a `scheme://` location of a scheme spoolctl has no driver for
 * (`INVALID_INPUT`); a plain path or a PostgreSQL URL passes.
 */
function checkScheme(value: string, where: string): void {
  const scheme = schemeOf(value);
  if (scheme === null || isPgUrl(value)) return;
  throw new SpoolError(
    "INVALID_INPUT",
    `${where}: unsupported database URL scheme ${scheme}:// in ${JSON.stringify(redactUrl(value))}`,
    {
      remediation: `give a SQLite file path, or a ${PG_SCHEMES.map((s) => `${s}://`).join(" or ")} URL`,
      detail: { scheme, supported: [...PG_SCHEMES] },
    },
  );
}

/**
 * The local spool folder of a PostgreSQL queue: under `$XDG_STATE_HOME`
 * (default `~/.local/state`), named after server and database, with a hash
 * of both so that two servers never share one folder.
 */
function pgSpoolDir(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const s = parsePgUrl(url, env, { lookupPassword: false });
  const identity = `${s.hostname}:${s.port}/${s.database}`;
  const hash = new Bun.CryptoHasher("sha256").update(identity).digest("hex").slice(0, 12);
  const slug = (text: string) =>
    text
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 40) || "x";
  const host = s.hostname.startsWith("/") ? "socket" : s.hostname;
  const base = env.XDG_STATE_HOME?.startsWith("/")
    ? env.XDG_STATE_HOME
    : // node:os only when HOME is unset: loading it costs a simple verb's start-up (docs/benchmarks.md "CLI start-up").
      join(env.HOME || (require("node:os") as typeof import("node:os")).homedir(), ".local", "state");
  return join(base, "spoolctl", `pg-${slug(host)}-${s.port}-${slug(s.database)}-${hash}.spool`);
}

/** The location of a PostgreSQL URL (validated: INVALID_INPUT when malformed). */
function pgLocation(url: string, source: DbPathSource, env: NodeJS.ProcessEnv): QueueLocation {
  const spoolDir = pgSpoolDir(url, env);
  const dbPath = redactUrl(url);
  fullUrls.set(dbPath, url);
  return { dbPath, spoolDir, source, url };
}

/** The project folder's name: `.spoolctl/` holds the config file and the default queue. */
const PROJECT_DIR = ".spoolctl";

/** The variable that lists folders whose `.spoolctl/` is used whoever owns it (`:`-separated; `*`: all). */
export const TRUSTED_DIRS_VAR = "SPOOLCTL_TRUSTED_DIRS";

/** A `.spoolctl/` passed over because another user owns it or its config file (docs/architecture.md "Location"). */
export interface UntrustedProjectDir {
  /** The folder holding `.spoolctl/`, absolute: what {@link TRUSTED_DIRS_VAR} would name. */
  root: string;
  /** The path owned by another user: `.spoolctl/` or its `config.json`. */
  path: string;
  uid: number;
}

/** Whether `root` (a folder holding `.spoolctl/`) is listed in {@link TRUSTED_DIRS_VAR}. */
function trusted(root: string, env: NodeJS.ProcessEnv): boolean {
  const list = (env[TRUSTED_DIRS_VAR] ?? "").split(":").filter((d) => d !== "");
  return list.some((d) => d === "*" || resolve(d) === root);
}

/**
 * Where a command in `cwd` finds its `.spoolctl/`, the way git finds `.git/`
 * (docs/architecture.md "Location"): `root` is `cwd` or the nearest parent that
 * holds a `.spoolctl` folder this user may trust, `cwd` itself when none does
 * (where the first write makes one). Like git's `safe.directory`, a
 * `.spoolctl/` (or its `config.json`) owned by another user than this one and
 * root is passed over, listed in `untrusted`, unless its folder is named in
 * `$SPOOLCTL_TRUSTED_DIRS`. Absolute paths.
 */
function findProject(
  cwd = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): { root: string; untrusted: UntrustedProjectDir[] } {
  const start = resolve(cwd);
  const untrusted: UntrustedProjectDir[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    let found = false;
    try {
      found = statSync(join(dir, PROJECT_DIR)).isDirectory();
    } catch {
      // not here (or not ours to read): look further up
    }
    if (found) {
      const foreign = [join(dir, PROJECT_DIR), join(dir, CONFIG_FILE)]
        .map((path) => ({ path, uid: foreignOwner(path) }))
        .find((f) => f.uid !== null);
      if (!foreign || trusted(dir, env)) return { root: dir, untrusted };
      untrusted.push({ root: dir, path: foreign.path, uid: foreign.uid! });
    }
    if (dirname(dir) === dir) return { root: start, untrusted };
  }
}

/** The folder whose `.spoolctl/` a command in `cwd` uses: {@link findProject}'s `root`. */
function projectRoot(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  return findProject(cwd, env).root;
}

/** The project config file a command in `cwd` reads: `.spoolctl/config.json` of {@link projectRoot}. */
export function projectConfigFile(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  return join(projectRoot(cwd, env), CONFIG_FILE);
}

/**
 * The spool folder of a database: beside it, named after it
 * (`queue.db` → `queue.spool/`), so two queues in one folder never share one.
 */
function spoolDirFor(dbPath: string): string {
  const name = basename(dbPath).replace(/\.(db|sqlite3?)$/i, "");
  return join(dirname(dbPath), `${name}.spool`);
}

/** What a project config file holds, or why it is unusable. */
export interface ProjectConfig {
  /** Absolute path of the file. */
  path: string;
  exists: boolean;
  /** False when the file exists but is not a JSON object with valid known keys. */
  valid: boolean;
  /** Why it is invalid, or null. */
  problem: string | null;
  /** `db_path`, resolved against the file's folder, or null when absent. */
  dbPath: string | null;
  /** Keys present in the file that spoolctl does not know (ignored). */
  unknownKeys: string[];
}

/** Reads and checks a project config file; never throws. */
export function readProjectConfig(file: string): ProjectConfig {
  const out: ProjectConfig = {
    path: file,
    exists: existsSync(file),
    valid: true,
    problem: null,
    dbPath: null,
    unknownKeys: [],
  };
  if (!out.exists) return out;
  const fail = (problem: string): ProjectConfig => ({ ...out, valid: false, problem });
  let parsed: unknown;
  let text = "";
  try {
    // Capped: `config validate /dev/zero` must not read for ever.
    const read = readBounded(file, CONFIG_FILE_MAX_BYTES);
    if (read.tooLarge) return fail(`larger than ${formatBytes(CONFIG_FILE_MAX_BYTES)}, the limit for a config file`);
    text = read.bytes.toString("utf8");
    parsed = JSON.parse(text);
  } catch (error) {
    const at = jsonErrorPosition(text);
    return fail(`not valid JSON${at ? ` at line ${at.line}, column ${at.column}` : ""}: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return fail("expected a JSON object");
  out.unknownKeys = Object.keys(parsed).filter((k) => !(CONFIG_KEYS as readonly string[]).includes(k));
  const dbPath = (parsed as { db_path?: unknown }).db_path;
  if (dbPath === undefined) return out;
  if (typeof dbPath !== "string" || dbPath === "") return fail("db_path must be a non-empty string");
  if (schemeOf(dbPath) !== null) {
    // A URL is kept as written, never resolved against the file's folder.
    if (!isPgUrl(dbPath))
      return fail(
        `db_path: unsupported database URL scheme ${schemeOf(dbPath)}:// (supported: ${PG_SCHEMES.map((x) => `${x}://`).join(", ")}, or a SQLite file path)`,
      );
    return { ...out, dbPath };
  }
  return { ...out, dbPath: resolve(dirname(file), dbPath) };
}

/**
 * Refuses a config file that group or others may write (`INTERNAL`,
 * `detail.unsafe` "mode"): whoever can rewrite it can point this user's
 * workers at their database (README "Folder ownership").
 */
function refuseWritableConfig(file: string): void {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return;
  }
  if ((mode & 0o022) === 0) return;
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  throw new SpoolError(
    "INTERNAL",
    `refusing ${file}: its mode ${octal} lets group or others write it, so another user could point your workers at their database`,
    {
      remediation: `run: chmod go-w ${file}  (then check its db_path), or pass --db`,
      detail: { path: file, unsafe: "mode" },
    },
  );
}

function fromConfig(root: string): string | null {
  refuseWritableConfig(join(root, CONFIG_FILE));
  const config = readProjectConfig(join(root, CONFIG_FILE));
  if (!config.valid) {
    throw new SpoolError("INVALID_INPUT", `${config.path}: ${config.problem}`, {
      remediation: `fix ${config.path}, or pass --db PATH`,
    });
  }
  return config.dbPath;
}

/**
 * Resolves the queue location.
 * @param flag the `--db` value, if given.
 * Raises `INVALID_INPUT` for an empty path, a broken config file, a malformed
 * PostgreSQL URL or a `scheme://` other than postgres:// and postgresql://.
 */
export function resolveLocation(flag: string | undefined, env = process.env, cwd = process.cwd()): QueueLocation {
  let given: string;
  let source: DbPathSource;
  let untrusted: UntrustedProjectDir[] | undefined;
  if (flag !== undefined) {
    if (flag === "") throw new SpoolError("INVALID_INPUT", "--db needs a path", { remediation: "write --db PATH" });
    checkScheme(flag, "--db");
    given = flag;
    source = "flag";
  } else if (env.SPOOLCTL_DB) {
    checkScheme(env.SPOOLCTL_DB, "SPOOLCTL_DB");
    given = env.SPOOLCTL_DB;
    source = "env";
  } else {
    const project = findProject(cwd, env);
    const configured = fromConfig(project.root);
    given = configured ?? join(project.root, PROJECT_DIR, "queue.db");
    source = configured ? "config" : "default";
    if (project.untrusted.length > 0) untrusted = project.untrusted;
  }
  const where = untrusted ? { untrusted } : {};
  if (isPgUrl(given)) return { ...pgLocation(given, source, env), ...where };
  const dbPath = resolve(cwd, given);
  return { dbPath, spoolDir: spoolDirFor(dbPath), source, ...where };
}
