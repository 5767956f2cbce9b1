/**
 * A PostgreSQL server that does not accept a connection within connect_timeout (overloaded,
 * or its postmaster stopped: SIGSTOP here) turned the connection away before any statement,
 * so `add` rides it out as it rides out a lock (docs/architecture.md "Contention") and adds
 * its job exactly once when the server answers again; with SPOOLCTL_LOCK_WAIT=0 it is
 * `LOCKED` (exit 4) naming connect_timeout, not INTERNAL. Its own server: the test stops it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { type PgServer, startPgServer } from "../support/pg-server.ts";
import { waitFor } from "../support/wait.ts";

const CLI = resolve(import.meta.dir, "../../src/cli.ts");
let server: PgServer;
let db: string;

beforeAll(async () => {
  server = await startPgServer();
  db = await server.createDatabase("timeout_q");
}, 120_000);

afterAll(async () => {
  process.kill(postmaster(), "SIGCONT");
  await server?.stop();
});

/** The server's main process, read from its pid file. */
function postmaster(): number {
  return Number(readFileSync(join(server.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
}

/** Runs `spoolctl add` on the queue with a 2 s connect_timeout; its output so far and its end. */
function add(env: Record<string, string>, ...argv: string[]) {
  const url = `${db}${db.includes("?") ? "&" : "?"}connect_timeout=2`;
  const proc = Bun.spawn(["bun", CLI, "add", "--db", url, ...argv], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  const pump = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const stdout = new Response(proc.stdout).text();
  return {
    stderr: () => stderr,
    done: (async () => {
      const code = await proc.exited;
      const out = await stdout;
      await pump;
      return { code, stdout: out, stderr };
    })(),
  };
}

async function jobs(): Promise<string[]> {
  const sql = new SQL(db, { max: 1 });
  try {
    return ((await sql`SELECT argv FROM jobs ORDER BY id`) as { argv: string | string[] }[]).map((r) =>
      (typeof r.argv === "string" ? JSON.parse(r.argv) : r.argv).join(" "),
    );
  } finally {
    await sql.close();
  }
}

test("add rides out a server that does not accept connections in time, and adds its job once", async () => {
  expect((await add({}, "--", "echo", "first").done).code).toBe(0); // the queue exists
  process.kill(postmaster(), "SIGSTOP");
  let resumed = false;
  try {
    const late = add({ SPOOLCTL_LOCK_WAIT: "60" }, "--", "echo", "late");
    await waitFor("add to say it keeps trying", () => late.stderr().includes("still trying"), 30_000);
    expect(late.stderr()).toContain("did not accept a connection in time (connect_timeout)");
    const refused = await add({ SPOOLCTL_LOCK_WAIT: "0" }, "--json", "--", "echo", "never").done;
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout).errors[0]).toMatchObject({
      code: "LOCKED",
      message: expect.stringContaining("connect_timeout"),
    });
    process.kill(postmaster(), "SIGCONT");
    resumed = true;
    const r = await late.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Added job \d+$/m);
  } finally {
    if (!resumed) process.kill(postmaster(), "SIGCONT");
  }
  expect(await jobs()).toEqual(["echo first", "echo late"]);
}, 120_000);
