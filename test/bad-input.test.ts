/**
 * Bad input (SPEC §6 "Totality"): every bad value of every flag of `add`,
 * `work`, `list`, `show` and `output` gives exit 1 with a clear error naming the
 * flag, a valid envelope under --json, no stack trace, and changes nothing in
 * the database.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";

// bunfig.toml's [test] timeout is not read by Bun 1.4.5: real processes need more than 5 s on a loaded machine.
setDefaultTimeout(60_000);

/** One queue for the whole file: a job that ran, so that show/output have something real to refuse around. */
const q = useTempQueue({ scope: "file" });
beforeAll(async () => {
  expect((await q.run(["add", "--key", "known", "--tag", "team=a", "--", "echo", "hi"])).code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  expect((await q.run(["add", "--after", "1h", "--", "echo", "later"])).code).toBe(0);
});

/** Everything in the queue, as one string (read through the driver; the spool listing and the folder too). */
async function dump(): Promise<string> {
  return JSON.stringify({
    queue: await q.snapshot(), // jobs, attempts, events, workers, settings and the queue id (meta)
    spool: readdirSync(join(q.spool, "output"), { recursive: true }).sort(),
    dir: readdirSync(q.dir)
      .filter((f) => !f.startsWith("queue.db"))
      .sort(),
  });
}

/** Inserts `--json` before a bare `--` (after it, it would be part of the command). */
function withJson(args: string[]): string[] {
  const i = args.indexOf("--");
  return i === -1 ? [...args, "--json"] : [...args.slice(0, i), "--json", ...args.slice(i)];
}

interface Case {
  args: string[];
  /** Text the message must contain: the flag (and the bad value, where there is one). */
  mentions: string[];
  code?: "INVALID_INPUT" | "MISSING_REQUIRED" | "UNKNOWN_FLAG" | "NOT_FOUND";
  didYouMean?: string;
  /** Skip the --json run (for cases about --json itself). */
  humanOnly?: boolean;
  stdin?: string;
}

const long = (n: number, c = "a") => c.repeat(n);

const ADD: Case[] = [
  // --timeout
  { args: ["add", "--timeout", "abc", "--", "true"], mentions: ["--timeout", '"abc"'] },
  { args: ["add", "--timeout", "-1", "--", "true"], mentions: ["--timeout", '"-1"'] },
  { args: ["add", "--timeout", "0", "--", "true"], mentions: ["--timeout", '"0"'] },
  { args: ["add", "--timeout", "31d", "--", "true"], mentions: ["--timeout", '"31d"'] },
  { args: ["add", "--timeout", "5w", "--", "true"], mentions: ["--timeout", '"5w"'] },
  { args: ["add", "--timeout", "", "--", "true"], mentions: ["--timeout"] },
  { args: ["add", "--timeout", "Infinity", "--", "true"], mentions: ["--timeout"] },
  { args: ["add", "--timeout", "NaN", "--", "true"], mentions: ["--timeout"] },
  // --max-retries / --max-crashes
  { args: ["add", "--max-retries", "many", "--", "true"], mentions: ["--max-retries", '"many"'] },
  { args: ["add", "--max-retries", "-1", "--", "true"], mentions: ["--max-retries", '"-1"'] },
  { args: ["add", "--max-retries", "1.5", "--", "true"], mentions: ["--max-retries", '"1.5"'] },
  { args: ["add", "--max-retries", "1001", "--", "true"], mentions: ["--max-retries", '"1001"', "1000"] },
  { args: ["add", "--max-retries", "0x10", "--", "true"], mentions: ["--max-retries"] },
  { args: ["add", "--max-crashes", "x", "--", "true"], mentions: ["--max-crashes", '"x"'] },
  { args: ["add", "--max-crashes", "-2", "--", "true"], mentions: ["--max-crashes"] },
  { args: ["add", "--max-crashes", "99999999999999999999", "--", "true"], mentions: ["--max-crashes"] },
  // --priority (32-bit)
  { args: ["add", "--priority", "high", "--", "true"], mentions: ["--priority", '"high"'] },
  { args: ["add", "--priority", "2147483648", "--", "true"], mentions: ["--priority", "2147483647"] },
  { args: ["add", "--priority", "-2147483649", "--", "true"], mentions: ["--priority", "-2147483648"] },
  { args: ["add", "--priority", "1.5", "--", "true"], mentions: ["--priority"] },
  { args: ["add", "--priority", "", "--", "true"], mentions: ["--priority"] },
  // --queue (lane names)
  { args: ["add", "--queue", "", "--", "true"], mentions: ["--queue"] },
  { args: ["add", "--queue", "-lead", "--", "true"], mentions: ["--queue", '"-lead"'] },
  { args: ["add", "--queue", ".hidden", "--", "true"], mentions: ["--queue"] },
  { args: ["add", "--queue", "has space", "--", "true"], mentions: ["--queue", '"has space"'] },
  { args: ["add", "--queue", "a/b", "--", "true"], mentions: ["--queue"] },
  { args: ["add", "--queue", "ünïcode", "--", "true"], mentions: ["--queue"] },
  { args: ["add", "--queue", long(65), "--", "true"], mentions: ["--queue", "64"] },
  // --after / --at
  { args: ["add", "--after", "soon", "--", "true"], mentions: ["--after", '"soon"'] },
  { args: ["add", "--after", "-5", "--", "true"], mentions: ["--after", '"-5"'] },
  { args: ["add", "--after", "5w", "--", "true"], mentions: ["--after"] },
  { args: ["add", "--after", "4000d", "--", "true"], mentions: ["--after"] },
  { args: ["add", "--after", "", "--", "true"], mentions: ["--after"] },
  { args: ["add", "--at", "tomorrow", "--", "true"], mentions: ["--at", '"tomorrow"'] },
  { args: ["add", "--at", "2026-13-01T00:00:00Z", "--", "true"], mentions: ["--at"] },
  { args: ["add", "--at", "2026-02-30T00:00:00Z", "--", "true"], mentions: ["--at"] },
  { args: ["add", "--at", "2026-01-01T25:00:00Z", "--", "true"], mentions: ["--at"] },
  { args: ["add", "--at", "", "--", "true"], mentions: ["--at"] },
  { args: ["add", "--after", "5m", "--at", "2030-01-01T00:00:00Z", "--", "true"], mentions: ["--after", "--at"] },
  // --cwd
  { args: ["add", "--cwd", "", "--", "true"], mentions: ["--cwd"] },
  // --env
  { args: ["add", "--env", "NOVALUE", "--", "true"], mentions: ["--env", 'entry 1 has no "="'] }, // never the text: it may be a secret
  { args: ["add", "--env", "=value", "--", "true"], mentions: ["--env", "empty name"] },
  { args: ["add", "--env", "1ABC=x", "--", "true"], mentions: ["--env", '"1ABC"'] },
  { args: ["add", "--env", "A B=x", "--", "true"], mentions: ["--env"] },
  { args: ["add", "--env", "A=1", "--env", "bad", "--", "true"], mentions: ["--env", "entry 2"] },
  // --tag
  { args: ["add", "--tag", "novalue", "--", "true"], mentions: ["--tag", "entry 1"] },
  { args: ["add", "--tag", "=x", "--", "true"], mentions: ["--tag"] },
  { args: ["add", "--tag", "a b=x", "--", "true"], mentions: ["--tag"] },
  {
    args: ["add", ...Array.from({ length: 17 }, (_, i) => ["--tag", `t${i}=v`]).flat(), "--", "true"],
    mentions: ["--tag", "16"],
  },
  { args: ["add", "--tag", `k=${long(257)}`, "--", "true"], mentions: ["--tag", "256"] },
  // --note, --key
  { args: ["add", "--note", long(4097), "--", "true"], mentions: ["--note", "4096"] },
  { args: ["add", "--key", "", "--", "true"], mentions: ["--key"] },
  { args: ["add", "--key", long(257), "--", "true"], mentions: ["--key", "256"] },
  // the command
  { args: ["add", "-c", "echo hi", "--", "echo", "hi"], mentions: ["-c", "--"] },
  { args: ["add", "-c", "echo hi", "echo"], mentions: ["-c"] },
  { args: ["add", "-c", "", "--", "true"], mentions: ["-c"] },
  { args: ["add", "-c", "   "], mentions: ["-c"] },
  { args: ["add"], mentions: ["command"], code: "MISSING_REQUIRED" },
  { args: ["add", "--"], mentions: ["command"], code: "MISSING_REQUIRED" },
  { args: ["add", "--timeout", "5"], mentions: ["command"], code: "MISSING_REQUIRED" },
  { args: ["add", "--", ""], mentions: ["command"] },
  // the parser
  {
    args: ["add", "--timout", "5", "--", "true"],
    mentions: ["--timout"],
    code: "UNKNOWN_FLAG",
    didYouMean: "--timeout",
  },
  { args: ["add", "--prio", "5", "--", "true"], mentions: ["--prio"], code: "UNKNOWN_FLAG", didYouMean: "--priority" },
  {
    args: ["add", "--max-retry", "5", "--", "true"],
    mentions: ["--max-retry"],
    code: "UNKNOWN_FLAG",
    didYouMean: "--max-retries",
  },
  { args: ["add", "--qeue", "x", "--", "true"], mentions: ["--qeue"], code: "UNKNOWN_FLAG", didYouMean: "--queue" },
  { args: ["add", "--zzzzzzzzzz", "--", "true"], mentions: ["--zzzzzzzzzz"], code: "UNKNOWN_FLAG" },
  { args: ["add", "-x", "--", "true"], mentions: ["-x"], code: "UNKNOWN_FLAG" },
  { args: ["add", "--timeout", "5", "--timeout", "6", "--", "true"], mentions: ["--timeout", "more than once"] },
  { args: ["add", "--queue", "a", "--queue=b", "--", "true"], mentions: ["--queue", "more than once"] },
  { args: ["add", "-c", "true", "-c", "false"], mentions: ["-c", "more than once"] },
  { args: ["add", "--timeout"], mentions: ["--timeout", "needs a value"] },
  { args: ["add", "--timeout", "--", "true"], mentions: ["--timeout", "needs a value"] },
  { args: ["add", "--queue", "--priority", "3", "--", "true"], mentions: ["--queue", "needs a value"] },
  { args: ["add", "-c"], mentions: ["-c", "needs a value"] },
  { args: ["add", "--json=yes", "--", "true"], mentions: ["--json", '"yes"'], humanOnly: true },
  // --from
  {
    args: ["add", "--from", "/nonexistent/spoolctl-jobs.ndjson"],
    mentions: ["--from", "/nonexistent/spoolctl-jobs.ndjson"],
  },
  { args: ["add", "--from", "-"], mentions: ["--from"], code: "MISSING_REQUIRED", stdin: "\n\n" },
  { args: ["add", "--from", "-", "--", "echo"], mentions: ["--from"], stdin: '{"argv":["true"]}\n' },
  {
    args: ["add", "--from", "-"],
    mentions: ["line 2", "not valid JSON"],
    stdin: '{"argv":["true"]}\n{"argv": [\n{"argv":["true"]}\n',
  },
  {
    args: ["add", "--from", "-"],
    mentions: ["line 3", "bogus"],
    stdin: '{"argv":["true"]}\n\n{"argv":["true"],"bogus":1}\n',
  },
  {
    args: ["add", "--from", "-"],
    mentions: ["line 2", "timeout", '"abc"'],
    stdin: '{"argv":["true"]}\n{"command":"true","timeout":"abc"}\n',
  },
  { args: ["add", "--from", "-"], mentions: ["line 1", "argv"], stdin: '{"argv":"true"}\n' },
  { args: ["add", "--from", "-"], mentions: ["line 1"], stdin: "[1,2]\n" },
  {
    args: ["add", "--from", "-"],
    mentions: ["line 2", "queue"],
    stdin: '{"argv":["true"]}\n{"argv":["true"],"queue":"no spaces"}\n',
  },
  { args: ["add", "--from", "-"], mentions: ["line 1"], code: "MISSING_REQUIRED", stdin: '{"queue":"x"}\n' },
  // A bad flag beside --from is the flag's mistake, not line 1's: the parser names --timeout before any line is read.
  { args: ["add", "--from", "-", "--timeout", "abc"], mentions: ["--timeout", '"abc"'], stdin: '{"argv":["true"]}\n' },
];

const WORK: Case[] = [
  { args: ["work", "--slots", "0"], mentions: ["--slots", '"0"'] },
  { args: ["work", "--slots", "-1"], mentions: ["--slots", '"-1"'] },
  { args: ["work", "--slots", "abc"], mentions: ["--slots", '"abc"'] },
  { args: ["work", "--slots", "1.5"], mentions: ["--slots"] },
  { args: ["work", "--slots", "100001"], mentions: ["--slots"] },
  { args: ["work", "--concurrency", "0"], mentions: ["--concurrency", '"0"'] },
  { args: ["work", "--concurrency", "many"], mentions: ["--concurrency"] },
  { args: ["work", "--concurrency", "1025"], mentions: ["--concurrency", "1024"] },
  { args: ["work", "--concurrency", ""], mentions: ["--concurrency"] },
  { args: ["work", "--poll-interval", "0"], mentions: ["--poll-interval"] },
  { args: ["work", "--poll-interval", "-1"], mentions: ["--poll-interval"] },
  { args: ["work", "--poll-interval", "fast"], mentions: ["--poll-interval", '"fast"'] },
  { args: ["work", "--poll-interval", "3601"], mentions: ["--poll-interval"] },
  { args: ["work", "--poll-interval", "1e999"], mentions: ["--poll-interval"] },
  { args: ["work", "--queue", "bad lane"], mentions: ["--queue", '"bad lane"'] },
  { args: ["work", "--queue", ""], mentions: ["--queue"] },
  { args: ["work", "--queue", long(65)], mentions: ["--queue"] },
  { args: ["work", "--worker-id", "has space"], mentions: ["--worker-id", '"has space"'] },
  { args: ["work", "--worker-id", ""], mentions: ["--worker-id"] },
  { args: ["work", "--worker-id", long(129)], mentions: ["--worker-id"] },
  { args: ["work", "--once", "--drain"], mentions: ["--once", "--drain"] },
  { args: ["work", "extra"], mentions: ["extra"] },
  { args: ["work", "--", "echo", "hi"], mentions: ["echo hi"] },
  {
    args: ["work", "--concurency", "2"],
    mentions: ["--concurency"],
    code: "UNKNOWN_FLAG",
    didYouMean: "--concurrency",
  },
  { args: ["work", "--slot", "2"], mentions: ["--slot"], code: "UNKNOWN_FLAG", didYouMean: "--slots" },
  { args: ["work", "--dran"], mentions: ["--dran"], code: "UNKNOWN_FLAG", didYouMean: "--drain" },
  { args: ["work", "--slots", "1", "--slots", "2"], mentions: ["--slots", "more than once"] },
  { args: ["work", "--once", "--once"], mentions: ["--once", "more than once"] },
  { args: ["work", "--slots"], mentions: ["--slots", "needs a value"] },
  { args: ["work", "--queue", "--drain"], mentions: ["--queue", "needs a value"] },
  { args: ["work", "--drain=maybe"], mentions: ["--drain", '"maybe"'] },
];

const LIST: Case[] = [
  { args: ["list", "--limit", "0"], mentions: ["--limit", '"0"'] },
  { args: ["list", "--limit", "-1"], mentions: ["--limit"] },
  { args: ["list", "--limit", "ten"], mentions: ["--limit", '"ten"'] },
  { args: ["list", "--limit", "10001"], mentions: ["--limit", "10000"] },
  { args: ["list", "--priority-min", "high"], mentions: ["--priority-min", '"high"'] },
  { args: ["list", "--priority-min", "2147483648"], mentions: ["--priority-min"] },
  { args: ["list", "--state", "bogus"], mentions: ["--state", '"bogus"'] },
  { args: ["list", "--state", "queued,bogus"], mentions: ["--state", '"bogus"'] },
  { args: ["list", "--queue", "a b"], mentions: ["--queue", '"a b"'] },
  { args: ["list", "--tag", "novalue"], mentions: ["--tag", "entry 1"] },
  { args: ["list", "--cursor", "0"], mentions: ["--cursor"] },
  { args: ["list", "--cursor", "abc"], mentions: ["--cursor", '"abc"'] },
  { args: ["list", "extra"], mentions: ["extra"] },
  { args: ["list", "--stat", "dead"], mentions: ["--stat"], code: "UNKNOWN_FLAG", didYouMean: "--state" },
  { args: ["list", "--limit", "1", "--limit", "2"], mentions: ["--limit", "more than once"] },
  { args: ["list", "--limit"], mentions: ["--limit", "needs a value"] },
];

const SHOW: Case[] = [
  { args: ["show"], mentions: ["job id"], code: "MISSING_REQUIRED" },
  { args: ["show", "1", "2"], mentions: ["one job id"] },
  { args: ["show", ""], mentions: ['""'] },
  { args: ["show", "999"], mentions: ["999"], code: "NOT_FOUND" },
  { args: ["show", "0"], mentions: ["0"], code: "NOT_FOUND" },
  { args: ["show", "no-such-key"], mentions: ["no-such-key"], code: "NOT_FOUND" },
  { args: ["show", "99999999999999999999999"], mentions: ["99999999999999999999999"], code: "NOT_FOUND" },
  { args: ["show", "1", "--attempt", "1"], mentions: ["--attempt"], code: "UNKNOWN_FLAG" },
  { args: ["show", "--jsn", "1"], mentions: ["--jsn"], code: "UNKNOWN_FLAG", didYouMean: "--json" },
];

const OUTPUT: Case[] = [
  { args: ["output"], mentions: ["job id"], code: "MISSING_REQUIRED" },
  { args: ["output", "1", "--attempt", "0"], mentions: ["--attempt", '"0"'] },
  { args: ["output", "1", "--attempt", "-1"], mentions: ["--attempt"] },
  { args: ["output", "1", "--attempt", "last"], mentions: ["--attempt", '"last"'] },
  { args: ["output", "1", "--attempt", "7"], mentions: ["attempt 7"], code: "NOT_FOUND" },
  { args: ["output", "1", "--stream", "stdin"], mentions: ["--stream", '"stdin"'] },
  { args: ["output", "1", "--stream", ""], mentions: ["--stream"] },
  { args: ["output", "1", "--raw"], mentions: ["--raw", "--stream"], humanOnly: true },
  { args: ["output", "1", "--raw", "--stream", "stdout"], mentions: ["--raw", "--json"] /* run with --json only */ },
  { args: ["output", "999"], mentions: ["999"], code: "NOT_FOUND" },
  { args: ["output", "1", "--strem", "stdout"], mentions: ["--strem"], code: "UNKNOWN_FLAG", didYouMean: "--stream" },
  { args: ["output", "1", "--attempt"], mentions: ["--attempt", "needs a value"] },
];

async function check(c: Case): Promise<void> {
  const before = await dump();
  const label = JSON.stringify(c.args).slice(0, 200);
  const onlyJson = c.args.includes("--raw") && c.args.includes("--stream");

  if (!onlyJson) {
    const human = await q.run(c.args, { stdin: c.stdin });
    expect({ label, code: human.code }).toEqual({ label, code: 1 });
    expect({ label, stdout: human.stdout }).toEqual({ label, stdout: "" });
    // One line on stderr, with the code, naming the flag; never a stack trace.
    const lines = human.stderr.split("\n").filter(Boolean);
    expect({ label, lines: lines.length }).toEqual({ label, lines: 1 });
    expect(lines[0]).toStartWith(`spoolctl: error: ${c.code ?? "INVALID_INPUT"}: `);
    for (const m of c.mentions)
      expect({ label, stderr: human.stderr }).toEqual({ label, stderr: expect.stringContaining(m) });
    expect(human.stderr).not.toMatch(/^\s+at /m);
  }

  if (!c.humanOnly) {
    const r = await q.run(withJson(c.args), { stdin: c.stdin });
    expect({ label, code: r.code }).toEqual({ label, code: 1 });
    let env: any;
    try {
      env = JSON.parse(r.stdout);
    } catch {
      throw new Error(`${label}: stdout is not one JSON envelope:\n${r.stdout}\nstderr:\n${r.stderr}`);
    }
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(Object.keys(env).sort()).toEqual(["commands", "data", "errors", "meta", "ok", "tool_version", "warnings"]);
    expect(env.ok).toBe(false);
    expect(env.data).toBeNull();
    expect(env.meta.contract_version).toBe("2");
    expect(env.errors).toHaveLength(1);
    const e = env.errors[0];
    expect({ label, code: e.code }).toEqual({ label, code: c.code ?? "INVALID_INPUT" });
    expect(e.exit_code).toBe(1);
    expect(typeof e.remediation).toBe("string");
    expect(e.remediation.length).toBeGreaterThan(0);
    for (const m of c.mentions)
      expect({ label, message: e.message }).toEqual({ label, message: expect.stringContaining(m) });
    if (c.didYouMean) expect(e.did_you_mean).toBe(c.didYouMean);
    expect({ label, stderr: r.stderr }).toEqual({ label, stderr: "" });
  }

  expect({ label, same: (await dump()) === before }).toEqual({ label, same: true });
}

test.each([
  ["add", ADD],
  ["work", WORK],
  ["list", LIST],
  ["show", SHOW],
  ["output", OUTPUT],
] as const)(
  "every bad value of %s is a clear exit-1 error and changes nothing",
  async (_verb, cases) => {
    // Run a few at a time: each case is two real CLI processes.
    const queue = [...cases];
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 2 }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          try {
            await check(c);
          } catch (error) {
            failures.push(`${JSON.stringify(c.args).slice(0, 200)}: ${(error as Error).message}`);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
  },
  300_000,
);

test("add --from with one bad line adds nothing, not even the good lines", async () => {
  const file = join(q.dir, "jobs.ndjson");
  writeFileSync(
    file,
    `${[
      '{"argv": ["echo", "one"]}',
      '{"command": "echo two"}',
      '{"argv": ["echo", "three"], "priority": "top"}',
      '{"argv": ["echo", "four"]}',
    ].join("\n")}\n`,
  );
  const before = await dump();
  const r = await q.run(["add", "--json", "--from", file]);
  expect(r.code).toBe(1);
  const env = JSON.parse(r.stdout);
  expect(env.errors[0].code).toBe("INVALID_INPUT");
  expect(env.errors[0].message).toContain("line 3");
  expect(env.errors[0].message).toContain("priority");
  expect(env.errors[0].message).toContain('"top"');
  expect(await dump()).toBe(before);
});

test("valid values at the edges of each range are accepted", async () => {
  // The counterpart of the table above: the bounds themselves are fine.
  const ok = [
    ["add", "--json", "--priority", "2147483647", "--", "true"],
    ["add", "--json", "--priority", "-2147483648", "--", "true"],
    ["add", "--json", "--max-retries", "1000", "--max-crashes", "0", "--", "true"],
    ["add", "--json", "--timeout", "30d", "--", "true"],
    ["add", "--json", "--queue", long(64, "Z"), "--", "true"],
    ["add", "--json", "--after", "0", "--", "true"],
    ["add", "--json", "--at", "0", "--", "true"],
    ["add", "--json", "--env", "A=", "--env", "_X=a=b", "--", "true"],
    ["add", "--json", ...Array.from({ length: 16 }, (_, i) => ["--tag", `t${i}=v`]).flat(), "--", "true"],
    ["add", "--json", "--key", long(256), "--note", long(4096), "--", "true"],
  ];
  for (const args of ok) {
    const r = await q.run(args);
    expect({ args: args.join(" ").slice(0, 80), code: r.code, stderr: r.stderr }).toEqual({
      args: args.join(" ").slice(0, 80),
      code: 0,
      stderr: "",
    });
  }
  for (const args of [
    ["list", "--limit", "10000"],
    ["list", "--limit", "1"],
    ["output", "1", "--attempt", "1"],
    [
      "work",
      "--once",
      "--slots",
      "100000",
      "--concurrency",
      "1024",
      "--poll-interval",
      "0.01",
      "--queue",
      "nothing-here",
    ],
  ]) {
    const r = await q.json(args);
    expect({ args, code: r.code }).toEqual({ args, code: 0 });
  }
});
