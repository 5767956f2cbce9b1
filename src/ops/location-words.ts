/**
 * Where the queue's location came from, in words for messages (README "Where
 * the queue lives"): an error about a database that cannot be reached says
 * which setting named it, so the user fixes the right one (a stale
 * `SPOOLCTL_DB` exported in another session, say). Pure: no I/O.
 */
import { SpoolError } from "../contract/errors.ts";
import type { DbPathSource } from "../model/location.ts";

/** Each source in words, for "… (given by SPOOLCTL_DB)". */
export const SOURCE_WORDS: Record<DbPathSource, string> = {
  flag: "given by --db",
  env: "given by SPOOLCTL_DB",
  config: "db_path of .spoolctl/config.json",
  default: "the default: no .spoolctl/ folder here or in a parent folder",
};

/** Driver codes of a login turned away (28P01, 28000) or a database that does not exist (3D000). */
const LOGIN_CODES = new Set(["28P01", "28000", "3D000"]);

/**
 * Whether `error` says the queue's database could not be reached or logged
 * into: `detail.storage` "unreachable", or a login/database refusal.
 */
function isConnectionFailure(error: unknown): error is SpoolError {
  if (!(error instanceof SpoolError)) return false;
  const code = error.detail?.driver_code;
  return error.detail?.storage === "unreachable" || (typeof code === "string" && LOGIN_CODES.has(code));
}

/**
 * `error` with where the location came from after the location in its
 * message (`… at postgres://h/q (given by SPOOLCTL_DB): …`), or at its end
 * when the message does not name it. Any other error is returned unchanged,
 * as is one that already says it.
 */
export function withLocationSource(error: unknown, location: { dbPath: string; source: DbPathSource }): unknown {
  if (!isConnectionFailure(error)) return error;
  const words = `(${SOURCE_WORDS[location.source]})`;
  if (error.message.includes(words)) return error;
  const at = `at ${location.dbPath}`;
  const message = error.message.includes(at)
    ? error.message.replace(at, `${at} ${words}`)
    : `${error.message} ${words}`;
  return new SpoolError(error.code, message, {
    remediation: error.remediation,
    did_you_mean: error.did_you_mean,
    detail: error.detail,
  });
}
