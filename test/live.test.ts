/**
 * Live views and readable text (issue 5): `status --watch` and `work --drain`
 * progress in a real pseudo-terminal (tmux: `capture-pane` to read the screen,
 * `send-keys C-c` to stop), their behaviour off a terminal, `output --follow`
 * streaming a running attempt, and colors only where they belong. Jobs wait on
 * a gate file the test creates, so nothing depends on timing.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { selectionFlags } from "../src/commands/selection.ts";
import { FAST_KNOBS, type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { HAVE_TMUX, Tty } from "./support/tmux.ts";
import { waitFor } from "./support/wait.ts";

let tty: Tty | null = null;
const workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    tty?.close();
    tty = null;
    for (const w of workers.splice(0)) {
      w.kill("SIGTERM");
      w.kill("SIGTERM"); // second signal: kill in-flight jobs too
      await w.exited;
    }
  },
});

/** A job that prints, then waits for `gate` in the queue folder, then prints again. */
const GATED = (gate: string, tail = "") =>
  `echo one; echo err-one >&2; while [ ! -e ${gate} ]; do sleep 0.02; done; echo two; echo err-two >&2${tail}`;

async function addJson(args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  expect(r.code).toBe(0);
  return r.json.data.job_id;
}

/** Each read of the pane is a tmux round trip: poll the screen a few times a second. */
const SCREEN_POLL_MS = 150;

/** The state of a job's latest attempt (undefined before its first claim). */
const attemptState = async (id: number) => (await q.attempts(id)).at(-1)?.state;

test("status keeps its one-shot text; --watch is refused off a terminal and with --json", async () => {
  await q.run(["add", "--", "echo", "a"]);
  const plain = await q.run(["status"]);
  expect(plain.stdout).toBe("canceled 0  dead 0  done 0  failed 0  queued 1  running 0\n");

  const piped = await q.run(["status", "--watch"]);
  expect(piped.code).toBe(1);
  expect(piped.stdout).toBe("");
  expect(piped.stderr).toContain("INVALID_INPUT: --watch needs a terminal, and stdout is not one");
  expect(piped.stderr).toContain("drop --watch to print the status once");

  const json = await q.json(["status", "--watch"]);
  expect(json.code).toBe(1);
  expect(json.env.ok).toBe(false);
  expect(json.env.errors[0].code).toBe("INVALID_INPUT");
  expect(json.env.errors[0].remediation).toContain("drop --watch");

  const interval = await q.json(["status", "--interval", "2"]);
  expect(interval.env.errors[0].message).toContain("--interval only applies to --watch");
  const bad = await q.json(["status", "--watch", "--interval", "0"]);
  expect(bad.env.errors[0].message).toContain("--interval");
}, 60000);

test.skipIf(!HAVE_TMUX)(
  "status --watch redraws lanes, running jobs and recent failures in a terminal until Ctrl-C",
  async () => {
    const failing = await addJson(["--max-retries", "0", "--", "sh", "-c", "echo broken >&2; exit 7"]);
    await q.run(["work", "--drain"]);
    const gated = await addJson(["--queue", "builds", "-c", GATED("gate")]);
    const worker = q.spawn(["work", "--queue", "builds", "--worker-id", "watch-worker"]);
    workers.push(worker);
    await waitFor("the gated job to run", async () => (await attemptState(gated)) === "running");

    tty = new Tty(["status", "--watch", "--interval", "0.2"], { cwd: q.dir, env: q.queueEnv() });
    const first = await waitFor(
      "the first frame",
      () => {
        const s = tty!.screen();
        return s.includes("RUNNING (1)") && s.includes("watch-worker") && s.includes(`process_exit: exit 7`) ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(first).toContain("spoolctl status --watch · every 0.2s");
    expect(first).toContain("canceled 0  dead 1  done 0  failed 0  queued 0  running 1");
    expect(first).toMatch(/LANE +QUEUED +OF WHICH SCHEDULED +HELD +RUNNING +DONE +DEAD +CANCELED/);
    expect(first).toMatch(/\nbuilds +0 +0 +0 +1 +0 +0 +0/);
    expect(first).toMatch(/\ndefault +0 +0 +0 +0 +0 +1 +0/);
    expect(first).toMatch(new RegExp(`\\n${gated} +builds +1 +\\S+ +watch-worker +sh -c 'echo one`));
    expect(first).toMatch(new RegExp(`\\n${failing} +1 +\\S+ ago +process_exit: exit 7 +dead +sh -c 'echo broken`));

    writeFileSync(join(q.dir, "gate"), "");
    const second = await waitFor(
      "a redraw after the job ended",
      () => {
        const s = tty!.screen();
        return s.includes("RUNNING (0)") ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(second).toContain("canceled 0  dead 1  done 1  failed 0  queued 0  running 0");
    expect(second).toContain("nothing running");

    tty.keys("C-c");
    const last = await waitFor(
      "a clean exit on Ctrl-C",
      () => {
        const s = tty!.screen();
        return s.includes("EXIT=") ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(last).toContain("EXIT=0");
    expect(last).toContain("RUNNING (0)"); // the last frame stays on screen
  },
  60000,
);

test("work --drain prints no progress on a pipe: only the worker lines", async () => {
  await q.run(["add", "--", "echo", "a"]);
  await q.run(["add", "--", "echo", "b"]);
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.stderr).not.toContain("\r");
  expect(r.stderr).not.toContain("draining");
  expect(r.stderr.trim().split("\n")).toHaveLength(5); // a start and an end line per job, and the closing summary
  const json = await q.run(["work", "--drain", "--json"]);
  expect(json.stderr).toBe("");
}, 60000);

test.skipIf(!HAVE_TMUX)(
  "work --drain on a terminal shows executed/left on one updating line, then clears it",
  async () => {
    await q.run(["add", "--", "echo", "first"]);
    await q.run(["add", "-c", GATED("gate")]);
    await q.run(["add", "--", "echo", "third"]);
    tty = new Tty(["work", "--drain"], { cwd: q.dir, env: q.queueEnv() });
    const during = await waitFor(
      "the progress line",
      () => {
        const s = tty!.screen();
        return s.includes("spoolctl: draining default: 1 executed, 2 left (1 running)") ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(during).toMatch(/spoolctl: job 1 attempt 1 succeeded \(\d+\.\ds\) -> done\n/);
    writeFileSync(join(q.dir, "gate"), "");
    const after = await waitFor(
      "the drain to end",
      () => {
        const s = tty!.screen();
        return s.includes("EXIT=") ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(after).toContain("EXIT=0");
    expect(after).toMatch(/job 3 attempt 1 succeeded .*-> done/);
    expect(after).not.toContain("draining"); // the progress line is gone once drained
    const lines = after.split("\n").filter((l) => l.startsWith("spoolctl: job"));
    expect(lines).toHaveLength(6); // each start and end line once, never overwritten or repeated
  },
  60000,
);

test.skipIf(!HAVE_TMUX)(
  "a drain waiting out a forced retry's hold-off counts that job as left, then runs it",
  async () => {
    const id = await addJson(["-c", GATED("gate")]);
    const first = q.spawn(["work", "--once"], { env: FAST_KNOBS });
    workers.push(first);
    await waitFor("the job to run", async () => (await q.job(id))?.state === "running", 30000);
    // Requeued with fresh budgets, due only after the old worker's heartbeat and kill grace.
    expect((await q.run(["retry", String(id), "--force"], { env: FAST_KNOBS })).code).toBe(0);
    writeFileSync(join(q.dir, "gate"), "");
    await first.exited;
    tty = new Tty(["work", "--drain"], { cwd: q.dir, env: { ...q.queueEnv(), ...FAST_KNOBS } });
    // Before, the line said "0 left" while the drain waited for the job (two answers to one question).
    await waitFor(
      "the progress line to count the held-off job",
      () => tty!.screen().includes("spoolctl: draining default: 0 executed, 1 left (0 running)"),
      30000,
      SCREEN_POLL_MS,
    );
    const after = await waitFor(
      "the drain to end",
      () => {
        const s = tty!.screen();
        return s.includes("EXIT=") ? s : null;
      },
      30000,
      SCREEN_POLL_MS,
    );
    expect(after).toContain("EXIT=0");
    expect(after).toMatch(new RegExp(`job ${id} attempt 2 succeeded .*-> done`));
  },
  60000,
);

test("output --follow streams a running attempt until it ends, then exits 0", async () => {
  const id = await addJson(["-c", GATED("gate", "; exit 5")]);
  workers.push(q.spawn(["work"]));
  await waitFor("the job to run", async () => (await attemptState(id)) === "running");

  const follow = Bun.spawn(["bun", join(import.meta.dir, "../src/cli.ts"), "output", String(id), "--follow"], {
    env: q.env(),
    cwd: q.dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  const pumps = Promise.all([pump(follow.stdout, (s) => (out += s)), pump(follow.stderr, (s) => (err += s))]);
  await waitFor("the first lines while the job still runs", () => out === "one\n" && err === "err-one\n");
  expect(await attemptState(id)).toBe("running");
  expect(follow.exitCode).toBeNull(); // still following

  writeFileSync(join(q.dir, "gate"), "");
  expect(await follow.exited).toBe(0);
  await pumps;
  expect(out).toBe("one\ntwo\n");
  expect(err).toBe("err-one\nerr-two\n"); // the job's stderr on stderr; no end line off a terminal
  expect(await attemptState(id)).toBe("failed");

  // Not running any more: prints what exists and exits at once; one stream goes to stdout.
  const ended = await q.run(["output", String(id), "--follow", "--stream", "stderr", "--attempt", "1"]);
  expect(ended.code).toBe(0);
  expect(ended.stdout).toBe("err-one\nerr-two\n");
  expect(ended.stderr).toBe("");

  const json = await q.json(["output", String(id), "--follow"]);
  expect(json.code).toBe(1);
  expect(json.env.errors[0].message).toContain("--follow streams bytes");
  // The remediation is a command to run as is: the job's id, the queue's selection, no placeholder.
  expect(json.env.errors[0].remediation).toBe(
    `spoolctl output ${selectionFlags({ dbPath: q.location().dbPath, source: "env" })} ${id} --json reads what exists so far`,
  );
}, 60000);

// A queued job's first attempt is waited for (test/follow-queued.test.ts); one canceled before it ran has none.
test("output --follow on a job that never ran and never will says so and exits 0", async () => {
  const id = await addJson(["--after", "1h", "--", "echo", "later"]);
  expect((await q.run(["cancel", String(id)])).code).toBe(0);
  const r = await q.run(["output", String(id), "--follow"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("NO_ATTEMPTS_YET");
}, 60000);

test("colors by state only when asked for a terminal: never on a pipe, never with NO_COLOR", async () => {
  await q.run(["add", "--", "echo", "a"]);
  await q.run(["add", "--max-retries", "0", "--", "false"]);
  await q.run(["work", "--drain"]);
  const piped = await q.run(["list"], { env: { NO_COLOR: "" } });
  expect(piped.stdout).not.toContain("\u001b[");
  const forced = await q.run(["list"], { env: { NO_COLOR: "", FORCE_COLOR: "1" } });
  expect(forced.stdout).toContain("\u001b[32mdone\u001b[39m");
  expect(forced.stdout).toContain("\u001b[31mdead\u001b[39m");
  // Colored cells keep the columns aligned: the QUEUE column starts at the same place on every row.
  const strip = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");
  const rows = strip(forced.stdout).trim().split("\n");
  expect(new Set(rows.map((r) => r.indexOf(r.includes("QUEUE") ? "QUEUE" : "default"))).size).toBe(1);
  const noColor = await q.run(["list"], { env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
  expect(noColor.stdout).not.toContain("\u001b[");

  const status = await q.run(["status"], { env: { NO_COLOR: "", FORCE_COLOR: "1" } });
  expect(strip(status.stdout).split("\n")[0]).toBe("canceled 0  dead 1  done 1  failed 0  queued 0  running 0");
  expect(status.stdout).toContain("\u001b[31mdead 1\u001b[39m");
  const show = await q.run(["show", "1"], { env: { NO_COLOR: "", FORCE_COLOR: "1" } });
  expect(show.stdout).toContain("\u001b[32mdone\u001b[39m");
  expect(strip(show.stdout)).toMatch(
    /\n# +STATE +STARTED +FINISHED +TOOK +RESULT +WORKER +HOST\n1 +succeeded +\S+ +\S+ +\d+\.\ds +exit 0/,
  );
}, 60000);
