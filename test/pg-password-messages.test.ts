/**
 * Login refusals say the same in `doctor` as in every other verb (issue 21
 * item 5): with a wrong password from PGPASSWORD, `doctor` says that
 * password was refused (it used to say "no password was given" while
 * `status` said it right), and both name where the URL came from. A real
 * PostgreSQL server (test/support/pg-server.ts) with a role that must give a
 * password (scram-sha-256 in pg_hba.conf for that role alone).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { pgDatabaseForTest } from "./support/pg-server.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

const ROLE = `spool_msg_${process.pid}`;
let admin: SQL;
let url = "";
let dir = "";
let hbaFile = "";
let hbaBackup: string | null = null;

beforeAll(async () => {
  const db = await pgDatabaseForTest(import.meta.file);
  const u = new URL(db);
  u.pathname = "/postgres";
  admin = new SQL(u.toString(), { max: 1 });
  await admin.unsafe(`CREATE ROLE ${ROLE} LOGIN PASSWORD 'right-pw'`);
  hbaFile = (await admin`SHOW hba_file`)[0].hba_file;
  hbaBackup = await Bun.file(hbaFile).text();
  writeFileSync(hbaFile, `host all ${ROLE} 127.0.0.1/32 scram-sha-256\n${hbaBackup}`);
  await admin`SELECT pg_reload_conf()`;
  const as = new URL(db);
  as.username = ROLE;
  url = as.toString();
  dir = mkdtempSync(join(tmpdir(), "spoolctl-pg-msg-"));
}, 120_000);

afterAll(async () => {
  if (hbaBackup !== null) {
    writeFileSync(hbaFile, hbaBackup);
    await admin`SELECT pg_reload_conf()`;
  }
  await admin?.unsafe(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => {});
  await admin?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], extra: Record<string, string | undefined>) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: "1" };
  delete env.PGDATABASE;
  delete env.PGPASSWORD;
  env.XDG_STATE_HOME = join(dir, "state");
  env.PGPASSFILE = join(dir, "no-pgpass");
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  const p = Bun.spawn(["bun", CLI, ...args], { env, cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

/** pg_hba.conf is re-read on reload; wait until a login with no password is refused (the rule is in force). */
async function ruleInForce(): Promise<void> {
  let last = "";
  await waitFor(
    "the scram rule to apply",
    async () => {
      const r = await cli(["status", "--json", "--db", url], {});
      last = r.stdout + r.stderr;
      return r.stdout.includes("refused the login");
    },
    30_000,
    200,
  ).catch((error) => {
    throw new Error(`${error.message}: ${last}`);
  });
}

test("doctor and status: a wrong PGPASSWORD was refused (not 'no password was given'), from where the URL came", async () => {
  await ruleInForce();
  const status = await cli(["status", "--json"], { SPOOLCTL_DB: url, PGPASSWORD: "wrong-pw" });
  const err = JSON.parse(status.stdout).errors[0];
  expect(err.message).toContain(`refused the login of user ${ROLE}`);
  expect(err.message).toContain("(given by SPOOLCTL_DB)");
  expect(err.remediation).toStartWith("the password from PGPASSWORD was refused: check it");

  const doctor = await cli(["doctor", "--json"], { SPOOLCTL_DB: url, PGPASSWORD: "wrong-pw" });
  const opens = JSON.parse(doctor.stdout).data.checks.find((c: { id: string }) => c.id === "db_opens");
  expect(opens.status).toBe("fail");
  expect(opens.message).toContain(`refused the login of user ${ROLE}`);
  expect(opens.message).toContain("(given by SPOOLCTL_DB)");
  expect(opens.remediation).toStartWith("the password from PGPASSWORD was refused: check it");
  expect(opens.remediation).not.toContain("no password was given");
  expect(JSON.stringify(opens)).not.toContain("wrong-pw");

  // No password at all is still said as such, by both.
  const none = await cli(["doctor", "--db", url], {});
  expect(none.stdout).toContain("(given by --db)");
  expect(none.stdout).toContain("no password was given: put it in PGPASSWORD or ~/.pgpass");
  // And the right one logs in.
  const right = await cli(["doctor", "--json", "--db", url], { PGPASSWORD: "right-pw" });
  expect(JSON.parse(right.stdout).data.checks.find((c: { id: string }) => c.id === "db_opens").status).toBe("pass");
});
