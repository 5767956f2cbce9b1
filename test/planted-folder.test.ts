/**
 * A planted `.spoolctl/` is never obeyed (issue 19 item 1; docs/architecture.md
 * "Location", "Folder ownership"). In a shared folder (mode 1777) a real second
 * user (`runuser -u nobody`) makes `.spoolctl/config.json`; this user, running
 * without `--db` in a folder below, must not use it: the folder is skipped with
 * a warning naming its owner and `SPOOLCTL_TRUSTED_DIRS`. A database is never
 * made in, or used from, a folder another user owns. Needs root (for runuser).
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asUser, cliIn, RUNUSER } from "./support/folder-cli.ts";
import { ON_POSTGRES, TempQueue } from "./support/temp-queue.ts";

const asRoot = process.getuid?.() === 0 && RUNUSER !== null;

let top: string;
let shared: string;
let sub: string;
beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), "spoolctl-planted-"));
  chmodSync(top, 0o755); // nobody must reach the shared folder inside
  shared = join(top, "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  sub = join(shared, "victim");
  mkdirSync(sub);
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

function asNobody(script: string): void {
  asUser("nobody", script);
}

function cli(args: string[], cwd: string, extra: Record<string, string> = {}) {
  return cliIn(top, args, cwd, extra);
}

/** nobody plants `shared/.spoolctl/config.json` naming `dbPath`. */
function plant(dbPath: string): void {
  asNobody(
    `mkdir -m 755 '${shared}/.spoolctl' && printf '%s' '${JSON.stringify({ db_path: dbPath })}' > '${shared}/.spoolctl/config.json'`,
  );
}

test.skipIf(!asRoot)(
  "work --drain below a planted .spoolctl/ naming a SQLite path: skipped with a warning, nothing made in nobody's folder",
  async () => {
    plant("q.db");
    const status = JSON.parse((await cli(["status", "--json"], sub)).stdout);
    expect(status.warnings.map((w: { code: string }) => w.code)).toContain("UNTRUSTED_FOLDER");
    const r = await cli(["work", "--drain"], sub);
    expect(r.code).toBe(0);
    expect(existsSync(join(shared, ".spoolctl", "q.db"))).toBe(false);
    expect(r.stderr).toContain(`${shared}/.spoolctl`);
    expect(r.stderr).toContain("owned by nobody (uid 65534)");
    expect(r.stderr).toContain(`SPOOLCTL_TRUSTED_DIRS=${shared}`);
    // The queue used is this folder's own default (found first from now on: it is ours).
    const shown = JSON.parse((await cli(["config", "show", "--json"], sub)).stdout);
    expect(shown.data.values.db_path).toBe(join(sub, ".spoolctl", "queue.db"));
  },
);

test.skipIf(!asRoot || !ON_POSTGRES)(
  "a planted config naming another's PostgreSQL database: its job never runs as this user",
  async () => {
    const q = new TempQueue();
    try {
      const out = join(top, "ran-as");
      expect((await q.run(["add", "--", "sh", "-c", `id -u > '${out}'`])).code).toBe(0);
      plant(q.db);
      const r = await cli(["work", "--drain"], sub, { XDG_STATE_HOME: join(top, "state") });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("owned by nobody (uid 65534)");
      expect(existsSync(out) ? readFileSync(out, "utf8") : "never ran").toBe("never ran");
      expect((await q.jobs())[0]!.state).toBe("queued");
    } finally {
      q.cleanup();
    }
  },
);

test.skipIf(!asRoot)("trusted explicitly with SPOOLCTL_TRUSTED_DIRS, the planted config is obeyed", async () => {
  plant("q.db");
  for (const trusted of [shared, "*"]) {
    const r = await cli(["config", "show", "--json"], sub, { SPOOLCTL_TRUSTED_DIRS: `/nowhere:${trusted}` });
    const env = JSON.parse(r.stdout);
    const untrusted = (env.warnings ?? []).filter((w: { code: string }) => w.code === "UNTRUSTED_FOLDER");
    expect([trusted, env.data.values.db_path, untrusted]).toEqual([trusted, join(shared, ".spoolctl", "q.db"), []]);
  }
});

test.skipIf(!asRoot)("a database in a folder another user owns is refused to writers, whatever named it", async () => {
  asNobody(`mkdir -m 755 '${shared}/theirs'`);
  const db = join(shared, "theirs", "q.db");
  const r = await cli(["add", "--db", db, "--json", "--", "true"], sub);
  expect(r.code).toBe(3);
  const error = JSON.parse(r.stdout).errors[0];
  expect(error.detail.unsafe).toBe("folder_owner");
  expect(error.message).toContain("owned by nobody (uid 65534)");
  expect(existsSync(db)).toBe(false);
  // A config that names it, trusted or not, changes nothing.
  plant(db);
  const w = await cli(["work", "--drain", "--json"], sub, { SPOOLCTL_TRUSTED_DIRS: shared });
  expect(w.code).toBe(3);
  expect(JSON.parse(w.stdout).errors[0].detail.unsafe).toBe("folder_owner");
  expect(existsSync(db)).toBe(false);
});
