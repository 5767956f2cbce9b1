/**
 * Messages of a first afternoon (issue 21 item 5): an unreachable database
 * names where its URL came from (--db, SPOOLCTL_DB, a config file), in
 * errors and in `doctor`; a worker that cannot reach it says so in one line
 * and gives up with how often it tried, not once per try; `feedback` starts
 * its tails at a line; `config set output_cap` on a SQLite queue says it
 * bounds shipped output only. The database "unreachable" is a closed port
 * on 127.0.0.1 (no server needed).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addJob, drain } from "./support/jobs.ts";
import { TEST_DB } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

/** Nothing listens on port 1: every connection is refused at once. */
const NOWHERE = "postgres://nobody@127.0.0.1:1/queue";

const q = useTempQueue();

test("an unreachable database names where its URL came from: --db, SPOOLCTL_DB, the config file; doctor too", async () => {
  const byFlag = await q.json(["status", "--db", NOWHERE]);
  expect(byFlag.env.errors[0].message).toStartWith(`cannot reach the queue's database at ${NOWHERE} (given by --db): `);
  // Refused: UNREACHABLE (exit 3, retryable), not INTERNAL.
  expect([byFlag.code, byFlag.env.errors[0].code]).toEqual([3, "UNREACHABLE"]);
  const byEnv = await q.run(["list"], { env: { SPOOLCTL_DB: NOWHERE } });
  expect(byEnv.stderr).toContain(`at ${NOWHERE} (given by SPOOLCTL_DB): could not connect`);
  // A project whose .spoolctl/config.json names it (and no SPOOLCTL_DB).
  const project = join(q.dir, "project");
  mkdirSync(join(project, ".spoolctl"), { recursive: true });
  writeFileSync(join(project, ".spoolctl/config.json"), JSON.stringify({ db_path: NOWHERE }));
  const byConfig = await q.run(["show", "1"], { env: { SPOOLCTL_DB: "" }, cwd: project });
  expect(byConfig.stderr).toContain(`at ${NOWHERE} (db_path of .spoolctl/config.json): could not connect`);
  const doctor = await q.json(["doctor"], { env: { SPOOLCTL_DB: "" }, cwd: project });
  const opens = doctor.env.data.checks.find((c: { id: string }) => c.id === "db_opens");
  expect(opens.status).toBe("fail");
  expect(opens.message).toContain(`at ${NOWHERE} (db_path of ${join(project, ".spoolctl/config.json")}): `);
});

test("a worker that cannot reach its database says so once, then gives up with how often it tried", async () => {
  const r = await q.run(["work", "--db", NOWHERE]);
  expect(r.code).toBe(3); // UNREACHABLE
  const lines = r.stderr.trim().split("\n");
  // Was one identical "…; will retry" line per try (18 in 30 s).
  expect(lines).toHaveLength(2);
  expect(lines[0]).toContain(`cannot reach the queue's database at ${NOWHERE} (given by --db)`);
  expect(lines[0]).toContain("; will retry for up to 30s: check that the PostgreSQL server is running");
  expect(lines[1]).toMatch(
    /^spoolctl: error: UNREACHABLE: cannot reach .* this worker tried \d+ times in \d+s to start/,
  );
});

test("feedback's tails start at a line: a line cut by --tail-bytes is left out, and the header counts lines", async () => {
  const id = await addJob(
    q,
    "--max-retries",
    "0",
    "--",
    "sh",
    "-c",
    'for i in $(seq 1 50); do echo "line number $i of the output" >&2; done; exit 3',
  );
  await drain(q);
  const text = (await q.run(["feedback", String(id), "--tail-bytes", "100"])).stdout;
  const stderr = text.slice(text.indexOf("--- stderr"));
  const shown = stderr.split("\n").slice(1, -2);
  expect(stderr).toMatch(/^--- stderr \(last 3 lines of \d+ bytes\) ---\n/);
  expect(shown).toEqual([
    "line number 48 of the output",
    "line number 49 of the output",
    "line number 50 of the output",
  ]);
  // JSON's tail starts at a line too, and says how many bytes come before it.
  const json = await q.json(["feedback", String(id), "--tail-bytes", "100"]);
  const tail = json.env.data.streams.stderr;
  expect(tail.tail).toBe("line number 48 of the output\nline number 49 of the output\nline number 50 of the output\n");
  expect(tail.omitted_bytes + Buffer.byteLength(tail.tail)).toBe(tail.size_bytes);
});

test.skipIf(TEST_DB.driver === "postgres")(
  "config set output_cap on a SQLite queue says it applies to shipped output only",
  async () => {
    const r = await q.run(["config", "set", "output_cap", "2000000"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "output_cap = 2000000 (was 1048576); applies to shipped output only: this SQLite queue ships none (its output stays in local files, which have no cap)\n",
    );
    // Another key keeps its words.
    expect((await q.run(["config", "set", "max_retries", "5"])).stdout).toContain("applies to jobs added from now on");
  },
);
