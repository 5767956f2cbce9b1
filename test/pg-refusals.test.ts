/**
 * Transient refusals of a PostgreSQL server (docs/architecture.md
 * "Contention"): with every connection slot taken (SQLSTATE 53300, "too many
 * clients") or the server starting up (57P03), `add` and `status` wait as
 * they do for a held lock, for up to SPOOLCTL_LOCK_WAIT seconds, then answer
 * LOCKED (exit 4) with the reason; they used to fail at once as INTERNAL
 * (exit 3). A real throwaway server with max_connections=4, whose slots are
 * held by another process.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpoolError } from "../src/contract/errors.ts";
import { mapPgError } from "../src/store/postgres/errors.ts";
import { type PgServer, startPgServer } from "./support/pg-server.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

const SLOTS = 4;
let server: PgServer | null = null;
let url = "";
let dir = "";
let skip = "";

beforeAll(async () => {
  try {
    // No slot kept for superusers: the test's user (postgres) meets the limit like anyone.
    server = await startPgServer({
      settings: { max_connections: String(SLOTS), superuser_reserved_connections: "0" },
    });
  } catch (error) {
    skip = (error as Error).message;
    return;
  }
  url = await server.createDatabase("refusals");
  dir = mkdtempSync(join(tmpdir(), "spoolctl-refusals-"));
  const created = await cli(["add", "--json", "--", "true"]);
  expect(created.code).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const h of holders) h.kill("SIGKILL");
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

function env(extra: Record<string, string> = {}): Record<string, string> {
  const e: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SPOOLCTL_DB: url,
    XDG_STATE_HOME: join(dir, "state"),
    NO_COLOR: "1",
    ...extra,
  };
  delete e.PGDATABASE;
  return e;
}

async function cli(args: string[], extra: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", CLI, ...args], { env: env(extra), cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** A process holding every connection slot of the server until killed. */
const HOLDER = `
const { SQL } = require("bun");
const held = [];
// The backends of a previous holder may still be ending: try each slot until it is had.
while (held.length < ${SLOTS}) {
  const sql = new SQL({ url: process.argv[1], max: 1 });
  try {
    await sql\`SELECT 1\`;
    held.push(sql);
  } catch {
    await sql.close().catch(() => {});
    await Bun.sleep(50); // a poll interval between tries of a slot
  }
}
console.log("held");
setInterval(() => {}, 1000);
`;

/** Starts the holder; resolves once it holds every slot. Killed by the test (or afterAll). */
async function holdAllSlots() {
  const proc = Bun.spawn(["bun", "-e", HOLDER, url], { env: env(), stdout: "pipe", stderr: "inherit" });
  holders.add(proc);
  const reader = proc.stdout.getReader();
  let out = "";
  await waitFor(
    "the slots to be held",
    async () => {
      const { value, done } = await reader.read();
      if (value) out += new TextDecoder().decode(value);
      return out.includes("held") || done;
    },
    30000,
  );
  expect(out).toContain("held");
  return {
    release: async () => {
      proc.kill("SIGKILL");
      await proc.exited;
      holders.delete(proc);
    },
  };
}

const holders = new Set<ReturnType<typeof Bun.spawn>>();

test("add and status wait while every connection slot is taken, then answer LOCKED with the reason", async () => {
  if (skip) return console.warn(`skipped: ${skip}`);
  const holder = await holdAllSlots();
  try {
    for (const verb of [
      ["add", "--json", "--", "true"],
      ["status", "--json"],
    ]) {
      const r = await cli(verb, { SPOOLCTL_LOCK_WAIT: "2" });
      const envelope = JSON.parse(r.stdout);
      expect([verb[0], r.code, envelope.errors[0]?.code]).toEqual([verb[0], 4, "LOCKED"]);
      expect(envelope.errors[0].message).toMatch(/too many clients|connection slot/);
      expect(envelope.errors[0].message).toContain("waited");
      // It waited (before, it failed at once as INTERNAL): the command's own count, rounded to seconds.
      expect(envelope.errors[0].detail.waited_seconds).toBeGreaterThanOrEqual(1);
    }
  } finally {
    await holder.release(); // the next test needs the slots
  }
});

test("an add that meets a full server goes through once a slot is free", async () => {
  if (skip) return console.warn(`skipped: ${skip}`);
  const holder = await holdAllSlots();
  const proc = Bun.spawn(["bun", CLI, "add", "--", "echo", "patient"], {
    env: env({ SPOOLCTL_LOCK_WAIT: "60" }),
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const status = cli(["status", "--json"], { SPOOLCTL_LOCK_WAIT: "60" });
  // The add has met the full server and says it keeps trying; then a slot is freed.
  await waitFor("the add to meet the full server", () => stderr.includes("still trying"), 60_000);
  await holder.release();
  const [code, s] = await Promise.all([proc.exited, status]);
  await reading;
  expect(code).toBe(0);
  expect(stderr).toMatch(/too many clients|connection slot/);
  expect(s.code).toBe(0);
  expect(JSON.parse(s.stdout).ok).toBe(true);
});

test("a server starting up (57P03) is LOCKED too, not INTERNAL", () => {
  const starting = Object.assign(new Error("the database system is starting up"), { errno: "57P03" });
  const full = Object.assign(new Error("sorry, too many clients already"), { errno: "53300" });
  for (const error of [starting, full]) {
    const mapped = mapPgError({ location: "postgres://h/db", user: "u" }, error) as SpoolError;
    expect(mapped).toBeInstanceOf(SpoolError);
    expect(mapped.code).toBe("LOCKED");
    expect(mapped.message).toContain(error.message);
  }
});
