/**
 * The libpq password file (`PGPASSFILE`, else `~/.pgpass`), read here because
 * Bun's client ignores it (Bun 1.4.5). Lines are
 * `hostname:port:database:username:password`; `*` matches any value of a
 * field, `\:` and `\\` escape; the first matching line wins; `#` starts a
 * comment line. As libpq does, a file that group or others may access is ignored.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** What a password is looked up for. */
export interface PassfileKey {
  host: string;
  port: number;
  database: string;
  user: string;
}

/** The password file's path. */
function passfilePath(env: NodeJS.ProcessEnv = process.env): string {
  // node:os only when HOME is unset: this module is on every verb's start path (via location.ts).
  return env.PGPASSFILE || join(env.HOME || (require("node:os") as typeof import("node:os")).homedir(), ".pgpass");
}

/** Splits one line into its fields, honouring `\:` and `\\`. */
function fields(line: string): string[] {
  const out: string[] = [];
  let current = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\" && i + 1 < line.length) {
      current += line[++i];
    } else if (c === ":" && out.length < 4) {
      out.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  out.push(current);
  return out;
}

/** The password for `key` from the password file, or null (no file, unsafe permissions, no matching line). */
export function passwordFromPassfile(key: PassfileKey, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = passfilePath(env);
  let text: string;
  try {
    const st = statSync(path);
    if (!st.isFile() || (st.mode & 0o077) !== 0) return null;
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const want = [key.host, String(key.port), key.database, key.user];
  for (const raw of text.split(/\r?\n/)) {
    if (raw === "" || raw.startsWith("#")) continue;
    const f = fields(raw);
    if (f.length < 5) continue;
    if (want.every((value, i) => f[i] === "*" || f[i] === value)) return f[4]!;
  }
  return null;
}
