/**
 * Regression tests for defects found by a hostile tester: foreign and
 * read-only database files, `output --raw` bytes, `--at` parsing, idempotency
 * keys, Object.prototype names, unbounded reads, `mutates` flags, and
 * `add --from` key conflicts inside one batch.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpoolError } from "../src/contract/errors.ts";
import { parseTimestamp } from "../src/ops/values.ts";
import { openSqliteStore } from "../src/store/sqlite/open.ts";
import { makeForeignSqliteFile, setSqliteJournalMode, sqliteFileFacts } from "./support/queue-fixtures.ts";
import { CLI, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";

// Real processes need more than Bun's 5 s default on a loaded machine, even under a plain `bun test`.
setDefaultTimeout(60_000);

const q = useTempQueue();

/** A file's bytes and mtime, to prove that nothing wrote to it. */
function snapshot(path: string) {
  const st = statSync(path);
  return { bytes: readFileSync(path).toString("base64"), mtimeMs: st.mtimeMs, size: st.size };
}

/** Runs the CLI with stdout as bytes (TempQueue.run decodes it as text). */
async function runBytes(args: string[]): Promise<{ code: number; stdout: Uint8Array; stderr: string; maxRSS: number }> {
  const proc = Bun.spawn(["bun", CLI, ...args], {
    env: q.env(),
    cwd: q.dir,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).arrayBuffer(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout: new Uint8Array(stdout), stderr, maxRSS: proc.resourceUsage()?.maxRSS ?? 0 };
}

/** Runs the CLI with `--json` placed before a `--` (TempQueue.json appends it, after the command's own arguments). */
async function json(
  args: string[],
  opts: { env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; env: any; stderr: string }> {
  const i = args.indexOf("--");
  const r = await q.run(i === -1 ? [...args, "--json"] : [...args.slice(0, i), "--json", ...args.slice(i)], opts);
  let env: any;
  try {
    env = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return { code: r.code, env, stderr: r.stderr };
}

// SQLite-only: these are about SQLite files as files (a foreign one, an empty one), skipped on PostgreSQL.
describe.skipIf(ON_POSTGRES)("A. a foreign SQLite file is refused and left untouched", () => {
  test("read and write verbs say 'not a spoolctl queue' (exit 3) and change no byte", async () => {
    const app = join(q.dir, "app.db");
    makeForeignSqliteFile(app);
    const before = snapshot(app);
    await Bun.sleep(20); // so that a write would show in the mtime
    const verbs = [
      ["status"],
      ["list"],
      ["show", "1"],
      ["output", "1"],
      ["config", "get", "timeout"],
      ["add", "--", "true"],
      ["work", "--drain"],
      ["config", "set", "timeout", "5m"],
      ["cancel", "1"],
    ];
    for (const verb of verbs) {
      const end = verb.indexOf("--");
      const args = end === -1 ? [...verb, "--db", app] : [...verb.slice(0, end), "--db", app, ...verb.slice(end)];
      const r = await json(args);
      expect([verb.join(" "), r.code]).toEqual([verb.join(" "), 3]);
      expect(r.env.errors[0].code).toBe("INTERNAL");
      expect(r.env.errors[0].message).toContain("not a spoolctl queue");
      expect(r.env.errors[0].message).toContain("users");
      expect(r.env.errors[0].remediation).toContain("--db");
      const human = await q.run(args);
      expect(human.code).toBe(3);
      expect(human.stderr).toMatch(/^spoolctl: error: INTERNAL: .*not a spoolctl queue.*\n$/);
    }
    expect(snapshot(app)).toEqual(before);
    expect(existsSync(`${app}-wal`)).toBe(false);
    expect(sqliteFileFacts(app)).toEqual({ journal_mode: "delete", tables: ["users"] });
  });

  test("an empty file is still a new queue for a write verb", async () => {
    writeFileSync(q.db, "");
    expect((await q.run(["add", "--", "true"])).code).toBe(0);
    expect(await q.jobs()).toHaveLength(1);
  });
});

// SQLite-only: SQLite's read-only open, file bytes, journal modes and file permissions, skipped on PostgreSQL.
describe.skipIf(ON_POSTGRES)("B. reading verbs open the queue read-only", () => {
  test("a read-only open reads the queue and cannot write it", async () => {
    await q.addJob("--", "true");
    const store = openSqliteStore({ path: q.db, spoolDir: q.spool, create: false, readOnly: true });
    try {
      expect((await store.read((tx) => tx.getJob(1)))?.argv).toEqual(["true"]);
      await expect(store.write((tx) => tx.setSetting("timeout", "5"))).rejects.toThrow(/readonly/i);
    } finally {
      await store.close();
    }
  });

  test("reading verbs do not change a current queue file, nor switch a rollback-journal file to WAL", async () => {
    await q.addJob("--", "true");
    setSqliteJournalMode(q.db, "DELETE");
    const before = snapshot(q.db);
    await Bun.sleep(20);
    for (const verb of [
      ["status"],
      ["list"],
      ["show", "1"],
      ["feedback", "1"],
      ["events"],
      ["workers"],
      ["report"],
      ["config", "show"],
      ["wait", "1", "--timeout", "0"],
    ]) {
      const r = await q.run(verb);
      expect([verb.join(" "), r.stderr.includes("INTERNAL")]).toEqual([verb.join(" "), false]);
    }
    expect(snapshot(q.db)).toEqual(before);
    expect(sqliteFileFacts(q.db).journal_mode).toBe("delete");
  });

  // Root bypasses file permissions, so the permission cases run the CLI as `nobody` (setpriv) when the suite runs as root.
  const setpriv = Bun.which("setpriv");
  const canDrop = process.getuid?.() === 0 && setpriv !== null;
  const NOBODY = 65534;

  /** A queue with one finished job in a folder `nobody` can reach; the caller sets permissions. */
  async function sharedQueue(): Promise<{ dir: string; db: string; cleanup(): void }> {
    const top = mkdtempSync(join(tmpdir(), "spoolctl-ro-"));
    chmodSync(top, 0o755);
    const dir = join(top, "queue");
    mkdirSync(dir, { mode: 0o755 });
    const db = join(dir, "q.db");
    expect((await q.run(["add", "--db", db, "--", "echo", "hello"])).code).toBe(0);
    expect((await q.run(["work", "--db", db, "--drain"])).code).toBe(0);
    chmodSync(db, 0o444);
    const spool = join(dir, "q.spool");
    // Open the whole spool to readers, whatever its layout (flat files or a folder per attempt).
    const open = (path: string): void => {
      if (statSync(path).isDirectory()) {
        chmodSync(path, 0o755);
        for (const name of readdirSync(path)) open(join(path, name));
      } else chmodSync(path, 0o444);
    };
    if (existsSync(spool)) open(spool);
    return { dir, db, cleanup: () => rmSync(top, { recursive: true, force: true }) };
  }

  async function asNobody(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...q.env(), HOME: "/tmp" };
    delete (env as Record<string, string>).SPOOLCTL_DB;
    const proc = Bun.spawn(
      [setpriv!, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "bun", CLI, ...args],
      { env, cwd: "/", stdin: "ignore", stdout: "pipe", stderr: "pipe" },
    );
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { code, stdout, stderr };
  }

  test.skipIf(!canDrop)(
    "a user who may only read the file (its folder writable) can read the queue; writing names the permission",
    async () => {
      const shared = await sharedQueue();
      try {
        chownSync(shared.dir, NOBODY, NOBODY);
        const before = snapshot(shared.db);
        await Bun.sleep(20);
        const status = await asNobody(["status", "--db", shared.db, "--json"]);
        expect([status.code, status.stderr]).toEqual([0, ""]);
        expect(JSON.parse(status.stdout).data.counts.done).toBe(1);
        expect((await asNobody(["list", "--db", shared.db])).stdout).toContain("echo hello");
        expect((await asNobody(["show", "1", "--db", shared.db])).code).toBe(0);
        const out = await asNobody(["output", "1", "--db", shared.db, "--stream", "stdout", "--raw"]);
        expect([out.code, out.stdout]).toEqual([0, "hello\n"]);
        const add = await asNobody(["add", "--db", shared.db, "--json", "--", "true"]);
        expect(add.code).toBe(3);
        expect(JSON.parse(add.stdout).errors[0].message).toMatch(/permission denied \(the file is read-only/);
        expect(snapshot(shared.db)).toEqual(before);
      } finally {
        shared.cleanup();
      }
    },
  );

  test.skipIf(!canDrop)(
    "a read-only file in a read-only folder: a clear permission error, and no file is created",
    async () => {
      const shared = await sharedQueue();
      try {
        chmodSync(shared.dir, 0o555);
        const before = snapshot(shared.db);
        await Bun.sleep(20);
        for (const verb of [["status"], ["list"], ["show", "1"], ["output", "1"]]) {
          const r = await asNobody([...verb, "--db", shared.db, "--json"]);
          expect([verb.join(" "), r.code]).toEqual([verb.join(" "), 3]);
          const error = JSON.parse(r.stdout).errors[0];
          expect(error.code).toBe("INTERNAL");
          expect(error.message).toContain("permission denied on its folder");
          expect(error.message).not.toContain("attempt to write a readonly database");
        }
        const add = await asNobody(["add", "--db", shared.db, "--json", "--", "true"]);
        expect(add.code).toBe(3);
        expect(JSON.parse(add.stdout).errors[0].message).toContain("permission denied");
        expect(snapshot(shared.db)).toEqual(before);
        expect(existsSync(`${shared.db}-wal`) || existsSync(`${shared.db}-shm`)).toBe(false);
      } finally {
        chmodSync(shared.dir, 0o755);
        shared.cleanup();
      }
    },
  );
});

describe("C. output --raw writes the exact bytes, streamed", () => {
  test("binary output comes back byte for byte", async () => {
    const bin = join(q.dir, "bin");
    const bytes = new Uint8Array(4096);
    crypto.getRandomValues(bytes);
    bytes.set([0xff, 0xfe, 0xc3, 0x28, 0x00, 0xe2, 0x82], 0); // surely not UTF-8
    writeFileSync(bin, bytes);
    const id = await q.addJob("--", "cat", bin);
    expect((await q.run(["work", "--drain"])).code).toBe(0);
    const r = await runBytes(["output", String(id), "--stream", "stdout", "--raw"]);
    expect(r.code).toBe(0);
    expect(Buffer.from(r.stdout).equals(Buffer.from(bytes))).toBe(true);
  });

  test("a large output file is copied in constant memory", async () => {
    const id = await q.addJob("--", "true");
    expect((await q.run(["work", "--drain"])).code).toBe(0);
    const path = (await q.attempt(id))!.stdout_path;
    const size = 256 * 1024 * 1024;
    truncateSync(path, size); // sparse: no disk used
    const proc = Bun.spawn(["bun", CLI, "output", String(id), "--stream", "stdout", "--raw"], {
      env: q.env(),
      cwd: q.dir,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let total = 0;
    for await (const chunk of proc.stdout) total += chunk.length;
    expect(await proc.exited).toBe(0);
    expect(total).toBe(size);
    // Reading the file whole (the old way) needs more than the file's size; a copy loop far less.
    expect(proc.resourceUsage()!.maxRSS).toBeLessThan(200 * 1024 * 1024);
  });
});

describe("D. --at parsing", () => {
  /** Runs `fn` with the process's local zone set to `tz` (Bun re-reads TZ when it changes). */
  function inZone<T>(tz: string, fn: () => T): T {
    const saved = process.env.TZ;
    process.env.TZ = tz;
    try {
      return fn();
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  }
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

  test("local times in zones with :45 and :30 offsets are found exactly", () => {
    expect(inZone("Asia/Kathmandu", () => iso(parseTimestamp("--at", "2027-12-01T09:00")))).toBe(
      "2027-12-01T03:15:00.000Z",
    );
    expect(inZone("Pacific/Chatham", () => iso(parseTimestamp("--at", "2027-12-01T09:00")))).toBe(
      "2027-11-30T19:15:00.000Z",
    ); // +13:45 in summer
    expect(inZone("Pacific/Chatham", () => iso(parseTimestamp("--at", "2027-07-01T09:00")))).toBe(
      "2027-06-30T20:15:00.000Z",
    ); // +12:45 in winter
    expect(inZone("Australia/Eucla", () => iso(parseTimestamp("--at", "2027-12-01T09:00:30")))).toBe(
      "2027-12-01T00:15:30.000Z",
    );
    expect(inZone("America/St_Johns", () => iso(parseTimestamp("--at", "2027-12-01T09:00")))).toBe(
      "2027-12-01T12:30:00.000Z",
    );
    expect(inZone("Pacific/Kiritimati", () => iso(parseTimestamp("--at", "2027-12-01T09:00")))).toBe(
      "2027-11-30T19:00:00.000Z",
    ); // +14:00
    expect(inZone("Pacific/Pago_Pago", () => iso(parseTimestamp("--at", "2027-12-01T09:00")))).toBe(
      "2027-12-01T20:00:00.000Z",
    ); // -11:00
  });

  test("daylight-saving gaps and overlaps are still rejected", () => {
    expect(() => inZone("Europe/Berlin", () => parseTimestamp("--at", "2027-03-28T02:30"))).toThrow(
      /daylight-saving gap/,
    );
    expect(() => inZone("Europe/Berlin", () => parseTimestamp("--at", "2027-10-31T02:30"))).toThrow(/occurs twice/);
    // Chatham moves by 1 h at 02:45 local time.
    expect(() => inZone("Pacific/Chatham", () => parseTimestamp("--at", "2027-09-26T03:00"))).toThrow(
      /daylight-saving gap/,
    );
    expect(() => inZone("Australia/Lord_Howe", () => parseTimestamp("--at", "2027-04-04T01:45"))).toThrow(
      /occurs twice/,
    ); // a 30-minute shift
  });

  test("a date that does not exist is 'not a valid date', in every form", () => {
    for (const raw of ["2026-02-29T09:00:00", "2026-02-29T09:00:00Z", "2027-04-31", "2027-02-30T00:00+01:00"]) {
      expect(() => inZone("Europe/Berlin", () => parseTimestamp("--at", raw))).toThrow(/not a valid date/);
    }
    expect(inZone("Europe/Berlin", () => iso(parseTimestamp("--at", "2028-02-29T09:00:00")))).toBe(
      "2028-02-29T08:00:00.000Z",
    );
  });

  test("zone offsets are bounded: hours at most 14, minutes below 60", () => {
    for (const raw of [
      "2027-01-01T09:00+99:99",
      "2027-01-01T09:00+15:00",
      "2027-01-01T09:00-14:30",
      "2027-01-01T09:00+05:60",
      "2027-01-01T09:00+0599",
    ]) {
      expect(() => parseTimestamp("--at", raw)).toThrow(/zone offset from -14:00 to \+14:00/);
    }
    expect(iso(parseTimestamp("--at", "2027-01-01T09:00+14:00"))).toBe("2026-12-31T19:00:00.000Z");
    expect(iso(parseTimestamp("--at", "2027-01-01T09:00-1200"))).toBe("2027-01-01T21:00:00.000Z");
  });

  test("--at has the --after bound (ten years ahead); show never meets an invalid date", async () => {
    for (const raw of [
      "9999999999999",
      "9999999999",
      "9999-01-01T00:00:00Z",
      String(Math.floor(Date.now() / 1000) + 11 * 365 * 86400),
    ]) {
      const r = await json(["add", "--at", raw, "--", "true"]);
      expect([raw, r.code, r.env.errors[0]?.code]).toEqual([raw, 1, "INVALID_INPUT"]);
      expect(r.env.errors[0].message).toContain("10 years ahead");
    }
    const ok = await json(["add", "--at", String(Math.floor(Date.now() / 1000) + 9 * 365 * 86400), "--", "true"]);
    expect(ok.code).toBe(0);
    const show = await q.run(["show", String(ok.env.data.job_id)]);
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain("Invalid Date");
    const kathmandu = await json(["add", "--at", "2027-12-01T09:00", "--", "true"], { env: { TZ: "Asia/Kathmandu" } });
    expect(kathmandu.code).toBe(0);
    expect(kathmandu.env.data.next_run_at).toBe(Date.parse("2027-12-01T03:15:00Z") / 1000);
  });
});

describe("E. idempotency keys that are only digits or blank", () => {
  test("add --key and add --from reject them; enqueue rejects a blank id", async () => {
    for (const key of ["2", "007", "", " ", "\t "]) {
      const r = await json(["add", "--key", key, "--", "true"]);
      expect([key, r.code, r.env.errors[0]?.code]).toEqual([key, 1, "INVALID_INPUT"]);
      expect(r.env.errors[0].message).toContain("--key");
    }
    const from = await json(["add", "--from", "-"], {
      stdin: '{"argv":["true"],"key":"a1"}\n{"argv":["true"],"key":"3"}\n',
    });
    expect([from.code, from.env.errors[0]?.code]).toEqual([1, "INVALID_INPUT"]);
    expect(from.env.errors[0].message).toContain("line 2");
    const enqueue = await json(["enqueue", '{"id":"  ","command":"true"}']);
    expect([enqueue.code, enqueue.env.errors[0]?.code]).toEqual([1, "INVALID_INPUT"]);
    expect(await q.exists()).toBe(false); // nothing was added, so no queue was created
    // A key with digits and letters still names its job.
    await q.addJob("--key", "2a", "--", "true");
    expect((await json(["show", "2a"])).env.data.job.idempotency_key).toBe("2a");
  });
});

describe("F. Object.prototype names are never found by a lookup", () => {
  test("flags, verbs, compound commands and schema --verb", async () => {
    const cases: [string[], string][] = [
      [["list", "--constructor", "x"], "UNKNOWN_FLAG"],
      [["list", "--toString"], "UNKNOWN_FLAG"],
      [["list", "--__proto__"], "UNKNOWN_FLAG"],
      [["list", "--hasOwnProperty=1"], "UNKNOWN_FLAG"],
      [["constructor"], "UNKNOWN_COMMAND"],
      [["__proto__"], "UNKNOWN_COMMAND"],
      [["toString"], "UNKNOWN_COMMAND"],
      [["worker", "constructor"], "UNKNOWN_COMMAND"],
      [["config", "__proto__"], "UNKNOWN_COMMAND"],
      [["schema", "--verb", "__proto__"], "INVALID_INPUT"],
      [["schema", "--verb", "constructor"], "INVALID_INPUT"],
      [["list", "--state", "constructor"], "INVALID_INPUT"],
      [["config", "get", "constructor"], "INVALID_INPUT"],
    ];
    for (const [args, code] of cases) {
      const r = await json(args);
      expect([args.join(" "), r.code, r.env.errors[0]?.code]).toEqual([args.join(" "), 1, code]);
    }
  });

  test("add --from and enqueue fields named after Object.prototype members are unknown fields", async () => {
    for (const field of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const r = await json(["add", "--from", "-"], { stdin: `{"argv":["true"],"${field}":{"a":1}}\n` });
      expect([field, r.code, r.env.errors[0]?.code]).toEqual([field, 1, "INVALID_INPUT"]);
      expect(r.env.errors[0].message).toContain(`unknown field "${field}"`);
      const e = await json(["enqueue", `{"id":"j1","command":"true","${field}":1}`]);
      expect([field, e.code, e.env.errors[0]?.code]).toEqual([field, 1, "INVALID_INPUT"]);
    }
  });

  test("lanes named constructor and toString are counted by status", async () => {
    await q.addJob("--queue", "constructor", "--", "true");
    await q.addJob("--queue", "toString", "--", "true");
    await q.addJob("--queue", "toString", "--after", "1h", "--", "true");
    const r = await json(["status"]);
    expect(r.code).toBe(0);
    expect(r.env.data.queues.constructor).toMatchObject({ queued: 1, scheduled: 0 });
    expect(r.env.data.queues.toString).toMatchObject({ queued: 2, scheduled: 1 });
    expect(Object.keys(r.env.data.queues).sort()).toEqual(["constructor", "toString"]);
  });
});

describe("G. reads are bounded", () => {
  test("config validate /dev/zero and an oversized config file fail naming the 1 MiB limit", async () => {
    const r = await json(["config", "validate", "/dev/zero"]);
    expect([r.code, r.env.errors[0]?.code]).toEqual([1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toContain("1 MiB");
    mkdirSync(join(q.dir, "project", ".spoolctl"), { recursive: true });
    writeFileSync(join(q.dir, "project", ".spoolctl", "config.json"), " ".repeat(1024 * 1024 + 1));
    const env = { ...q.env() } as Record<string, string>;
    const proc = Bun.spawn(["bun", CLI, "status", "--json"], {
      env: { ...env, SPOOLCTL_DB: "" },
      cwd: join(q.dir, "project"),
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = JSON.parse(await new Response(proc.stdout).text());
    expect(await proc.exited).toBe(1);
    expect(out.errors[0].code).toBe("INVALID_INPUT");
    expect(out.errors[0].message).toContain("1 MiB");
  });

  test("add --from /dev/zero and an endless stdin fail naming the 64 MiB limit", async () => {
    const r = await json(["add", "--from", "/dev/zero"]);
    expect([r.code, r.env.errors[0]?.code]).toEqual([1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toContain("64 MiB");
    const proc = Bun.spawn(["sh", "-c", `cat /dev/zero | bun "${CLI}" add --from - --json`], {
      env: q.env(),
      cwd: q.dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = JSON.parse(await new Response(proc.stdout).text());
    expect(await proc.exited).toBe(1);
    expect(out.errors[0].code).toBe("INVALID_INPUT");
    expect(out.errors[0].message).toContain("64 MiB");
    expect(await q.exists()).toBe(false);
  });
});

describe("H. capabilities publish which verbs write", () => {
  test("every verb that writes says mutates: true; reading verbs say false", async () => {
    const r = await json(["capabilities"]);
    const verbs = r.env.data.verbs as Record<string, { mutates: boolean }>;
    const writers = [
      "add",
      "work",
      "stop",
      "retry",
      "cancel",
      "triage",
      "prune",
      "enqueue",
      "config-set",
      "config-unset",
      "rerun",
      "delete",
      // wait writes a batch's fail-fast property (--fail-fast); it opens read-only without it.
      "wait",
      "pause",
      "resume",
      "lane-set",
      "schedule-add",
      "schedule-rm",
      "schedule-pause",
      "schedule-resume",
      "schedule-run-now",
      "schedule-tick",
      "hook-add",
      "hook-rm",
      "batch-seal",
      "hold",
      "release",
      "edit",
      "priority",
      // ui serves the write verbs (and creates the queue unless --read-only).
      "ui",
    ];
    for (const name of writers) expect([name, verbs[name]?.mutates]).toEqual([name, true]);
    for (const [name, v] of Object.entries(verbs))
      if (!writers.includes(name)) expect([name, v.mutates]).toEqual([name, false]);
  });
});

describe("I. add --from: a key reused inside one batch", () => {
  test("a different command under a key of an earlier line names that line, not a job id", async () => {
    const r = await json(["add", "--from", "-"], {
      stdin: '{"argv":["echo","a"],"key":"k"}\n\n{"argv":["echo","b"],"key":"k"}\n',
    });
    expect([r.code, r.env.errors[0]?.code]).toEqual([5, "IDEMPOTENCY_CONFLICT"]);
    const message = r.env.errors[0].message as string;
    expect(message).toContain("line 3");
    expect(message).toContain("line 1 of this batch");
    expect(message).not.toMatch(/job \d/);
    expect(await q.jobs()).toEqual([]);
  });

  test("the same command twice is deduplicated to one job; an older active job is still named by id", async () => {
    const r = await json(["add", "--from", "-"], {
      stdin: '{"argv":["echo","a"],"key":"k"}\n{"argv":["echo","a"],"key":"k"}\n',
    });
    expect(r.code).toBe(0);
    expect(r.env.data.jobs.map((j: { job_id: number; deduplicated: boolean }) => [j.job_id, j.deduplicated])).toEqual([
      [1, false],
      [1, true],
    ]);
    const again = await json(["add", "--from", "-"], { stdin: '{"argv":["echo","b"],"key":"k"}\n' });
    expect(again.code).toBe(5);
    expect(again.env.errors[0].message).toContain("active job 1");
  });
});

// SQLite-only: the SQLite driver's open of a file that is not SQLite at all, skipped on PostgreSQL.
test.skipIf(ON_POSTGRES)("SpoolError stays the only failure type of the open path (sanity for A/B)", () => {
  writeFileSync(q.db, "not sqlite at all\n".repeat(50));
  expect(() => openSqliteStore({ path: q.db, spoolDir: join(q.dir, "s"), create: false, readOnly: true })).toThrow(
    SpoolError,
  );
  expect(() => openSqliteStore({ path: q.db, spoolDir: join(q.dir, "s"), create: true })).toThrow(SpoolError);
});
