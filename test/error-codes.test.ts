/**
 * One test per error code of the registry (src/contract/errors.ts, SPEC §6),
 * each triggered through the real CLI: the exit code is the registry's, the
 * envelope is `ok: false` with `data: null` and exactly that error (valid
 * against the exported envelope schema), and human mode prints one stderr
 * line with the same code and no stack trace.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERBS } from "../src/commands/registry.ts";
import { ERROR_CODES, type ErrorCode } from "../src/contract/errors.ts";
import { schemaExport } from "../src/describe/schemas.ts";
import { compileContract } from "./support/contract.ts";
import { killSpawned, startBg } from "./support/processes.ts";
import { SQLITE_LOCK_HOLDER, schemaVersion, setSchemaVersion } from "./support/queue-fixtures.ts";
import { ON_POSTGRES, TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

// The preload's default timeout does not reach every file when the whole suite runs (Bun 1.4.5): real processes on a loaded machine need more than 5 s.
setDefaultTimeout(120_000);

const contract = compileContract(schemaExport(Object.keys(VERBS)));
const q = useTempQueue({ scope: "file", teardown: killSpawned });
const tested = new Set<string>();

beforeAll(async () => {
  const r = await q.run(["add", "--key", "k1", "--json", "--", "echo", "one"]);
  expect(r.code).toBe(0);
}, 120_000);

/** Runs `args` with --json (before any bare --) and in human mode; checks both against `code`. */
async function expectError(
  code: ErrorCode,
  args: string[],
  opts: { queue?: TempQueue; human?: boolean } = {},
): Promise<any> {
  const at = args.indexOf("--");
  const withJson = at === -1 ? [...args, "--json"] : [...args.slice(0, at), "--json", ...args.slice(at)];
  const target = opts.queue ?? q;
  const [j, h] = await Promise.all([target.run(withJson), opts.human === false ? null : target.run(args)]);
  const where = `spoolctl ${withJson.join(" ")}\nstdout: ${j.stdout}\nstderr: ${j.stderr}`;
  const env = JSON.parse(j.stdout);
  expect([where, j.code]).toEqual([where, ERROR_CODES[code].exit_code]);
  expect(env.ok).toBe(false);
  expect(env.data).toBeNull();
  expect(env.errors).toHaveLength(1);
  expect(env.errors[0]).toMatchObject({ code, exit_code: ERROR_CODES[code].exit_code });
  expect(env.errors[0].message.length).toBeGreaterThan(0);
  expect(env.errors[0].remediation.length).toBeGreaterThan(0);
  expect(contract.envelope(env)).toEqual([]);
  expect(j.stderr).not.toMatch(/^\s+at /m);
  if (h) {
    expect(h.code).toBe(ERROR_CODES[code].exit_code);
    expect(h.stdout).toBe("");
    expect(h.stderr).toContain(code);
    expect(h.stderr.trim().split("\n")).toHaveLength(1);
    expect(h.stderr).not.toMatch(/^\s+at /m);
  }
  tested.add(code);
  return env.errors[0];
}

test("INVALID_INPUT: a bad value names the flag, the value and the accepted range", async () => {
  const e = await expectError("INVALID_INPUT", ["list", "--limit", "0"]);
  expect(e.message).toContain("--limit");
  expect(e.message).toContain('"0"');
  expect(e.detail).toMatchObject({ flag: "--limit", value: "0" });
  expect(e.detail.accepted).toContain("1");
  // Prototype names are values like any other (regressions found by the fuzz test).
  expect((await expectError("INVALID_INPUT", ["list", "--state", "constructor"], { human: false })).message).toContain(
    '"constructor"',
  );
  expect(
    (await expectError("INVALID_INPUT", ["retry", "--all", "--state", "toString"], { human: false })).message,
  ).toContain('"toString"');
  expect(
    (await expectError("INVALID_INPUT", ["enqueue", '{"id":"p","command":"true","constructor":1}'], { human: false }))
      .message,
  ).toContain("unknown field");
});

test("MISSING_REQUIRED: a verb without its argument", async () => {
  expect((await expectError("MISSING_REQUIRED", ["show"])).message).toContain("show needs a job id");
  await expectError("MISSING_REQUIRED", ["prune", "--dry-run"], { human: false });
  await expectError("MISSING_REQUIRED", ["dlq"], { human: false });
});

test("NOT_FOUND: an unknown job id or key", async () => {
  expect((await expectError("NOT_FOUND", ["show", "42"])).message).toBe("no job with id 42");
  await expectError("NOT_FOUND", ["feedback", "no-such-key"], { human: false });
});

test("UNKNOWN_FLAG: with did_you_mean; never abbreviated; prototype names are no flags", async () => {
  const e = await expectError("UNKNOWN_FLAG", ["list", "--limt", "5"]);
  expect(e.did_you_mean).toBe("--limit");
  expect((await expectError("UNKNOWN_FLAG", ["list", "--lim", "5"], { human: false })).did_you_mean).toBe("--limit");
  expect((await expectError("UNKNOWN_FLAG", ["list", "--constructor", "5"], { human: false })).message).toBe(
    "unknown flag --constructor",
  );
  // A guess keeps something of the input: no "--db" for "--日本".
  expect((await expectError("UNKNOWN_FLAG", ["list", "--日本"], { human: false })).did_you_mean).toBeNull();
});

test("UNKNOWN_COMMAND: with did_you_mean; prototype names are no verbs", async () => {
  expect((await expectError("UNKNOWN_COMMAND", ["lsit"])).did_you_mean).toBe("list");
  expect((await expectError("UNKNOWN_COMMAND", ["dlq", "lst"], { human: false })).did_you_mean).toBe("dlq list");
  for (const name of ["constructor", "__proto__", "toString"]) {
    expect((await expectError("UNKNOWN_COMMAND", [name], { human: false })).message).toBe(
      `unknown command ${JSON.stringify(name)}`,
    );
  }
});

test("SAFETY_BLOCK: prune without --yes or --dry-run", async () => {
  const e = await expectError("SAFETY_BLOCK", ["prune", "--older-than", "1d"]);
  expect(e.remediation).toContain("--dry-run");
});

test("INTERNAL: a database newer than this binary is refused and left untouched", async () => {
  const newer = new TempQueue();
  try {
    expect((await newer.run(["add", "--", "true"])).code).toBe(0);
    await setSchemaVersion(newer, 999); // test-only: a queue written by a future spoolctl
    // Left untouched: on SQLite byte for byte; on either, still at version 999.
    const before = newer.driver === "sqlite" ? readFileSync(newer.db) : null;
    const e = await expectError("INTERNAL", ["status"], { queue: newer });
    expect(e.message).toContain("newer than this spoolctl");
    if (before) expect(readFileSync(newer.db).equals(before)).toBe(true);
    expect(await schemaVersion(newer)).toBe("999");
  } finally {
    newer.cleanup();
  }
});

// SQLite-only: a damaged file (test/corrupt-file.test.ts damages pages; here the header).
test.skipIf(ON_POSTGRES)("QUEUE_CORRUPT: a queue file whose header is damaged", async () => {
  const damaged = new TempQueue();
  try {
    expect((await damaged.run(["add", "--", "true"])).code).toBe(0);
    const bytes = readFileSync(damaged.db);
    bytes.fill(0x41, 0, 100);
    writeFileSync(damaged.db, bytes);
    const e = await expectError("QUEUE_CORRUPT", ["status"], { queue: damaged });
    expect(e.remediation).toContain(`spoolctl doctor --db ${damaged.db}`);
  } finally {
    damaged.cleanup();
  }
});

// SQLite-only: the lock is SQLite's file write lock, held on purpose by a second process (raw BEGIN IMMEDIATE).
test.skipIf(ON_POSTGRES)(
  "LOCKED: a writer waits out the 5 s busy timeout while another process holds the write lock",
  async () => {
    const holder = join(q.dir, "hold.ts");
    writeFileSync(holder, SQLITE_LOCK_HOLDER);
    const bg = startBg(q, [], { argv0: ["bun", holder, q.db, "12"] });
    await waitFor("the lock to be held", () => bg.stdout().includes("locked"), 30000);
    const started = performance.now();
    // cancel, not add: add rides the lock out for SPOOLCTL_LOCK_WAIT (test/contention.test.ts).
    const e = await expectError("LOCKED", ["cancel", "1"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(4500);
    expect(e.remediation).toMatch(/retry/);
    bg.proc.kill("SIGKILL");
    await bg.exited;
    expect((await q.jobs()).map((j) => j.state)).toEqual(["queued"]);
  },
  60000,
);

// SQLite-only: a PostgreSQL queue has no file to delete (test/vanished-file.test.ts has more).
test.skipIf(ON_POSTGRES)("QUEUE_REPLACED: a worker whose queue file was deleted exits", async () => {
  const own = new TempQueue();
  try {
    await own.addJob("--", "true");
    const env = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2" };
    const [j, h] = [startBg(own, ["work", "--json"], { env }), startBg(own, ["work"], { env })];
    await waitFor("both workers to register", async () => (await own.workers()).length === 2, 30000);
    rmSync(own.db);
    expect([await j.exited, await h.exited]).toEqual([3, 3]);
    const envelope = JSON.parse(j.stdout());
    expect(envelope).toMatchObject({ ok: false, data: null });
    expect(envelope.errors).toHaveLength(1);
    expect(envelope.errors[0]).toMatchObject({ code: "QUEUE_REPLACED", exit_code: 3 });
    expect(contract.envelope(envelope)).toEqual([]);
    expect(h.stdout()).toBe("");
    expect(h.stderr()).toContain("error: QUEUE_REPLACED: the queue file");
    expect(h.stderr()).not.toMatch(/^\s+at /m);
    tested.add("QUEUE_REPLACED");
  } finally {
    own.cleanup();
  }
});

test("TIMEOUT: wait --timeout on a job nobody runs", async () => {
  const e = await expectError("TIMEOUT", ["wait", "1", "--timeout", "0.1"]);
  expect(e.detail.pending).toEqual([1]);
});

test("UNREACHABLE: a PostgreSQL server that refuses the connection", async () => {
  // Port 1 on this host: nothing listens there, so the connection is refused at once.
  const e = await expectError("UNREACHABLE", ["status", "--db", "postgres://spoolctl@127.0.0.1:1/nowhere"]);
  expect(e.message).toContain("cannot reach the queue's database at postgres://spoolctl@127.0.0.1:1/nowhere");
  expect(e.detail.storage).toBe("unreachable");
});

test("CONFLICT: retry of a queued job", async () => {
  expect((await expectError("CONFLICT", ["retry", "1"])).message).toContain("already queued");
});

test("IDEMPOTENCY_CONFLICT: the same --key for another command", async () => {
  expect((await expectError("IDEMPOTENCY_CONFLICT", ["add", "--key", "k1", "--", "echo", "other"])).message).toContain(
    "k1",
  );
});

test("every error code of the registry was triggered above", () => {
  // LOCKED is triggered by holding SQLite's write lock, QUEUE_CORRUPT and QUEUE_REPLACED by damaging or deleting its file: SQLite-only tests.
  expect([...tested].sort()).toEqual(
    Object.keys(ERROR_CODES)
      .filter((c) => !(ON_POSTGRES && ["LOCKED", "QUEUE_CORRUPT", "QUEUE_REPLACED"].includes(c)))
      .sort(),
  );
});
