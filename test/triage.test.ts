/**
 * `spoolctl triage` and the `retry`/`cancel` pickers (issue 5, SPEC §7) in a
 * REAL pseudo-terminal: each flow runs in its own tmux server (test/support/tmux.ts),
 * the test reads the screen with `capture-pane` and types with `send-keys`,
 * waiting for every prompt to appear before answering it (never sleep-and-hope).
 * The queue is then checked through the driver. Off a terminal, or under --json, the
 * same verbs must fail fast with MISSING_REQUIRED / INVALID_INPUT.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { withoutSelection } from "./support/envelopes.ts";
import { addJob, drain, gatedJob } from "./support/jobs.ts";
import { killJobGroups } from "./support/processes.ts";
import { type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, Tty } from "./support/tmux.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(90_000);

let tty: Tty | null = null;
const workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    tty?.close(); // kills the tmux server and removes its socket
    tty = null;
    for (const w of workers.splice(0)) {
      w.kill("SIGKILL");
      await w.exited;
    }
    await killJobGroups(q); // a SIGKILLed worker's job would otherwise outlive the test
  },
});

/** Generous: a loaded CI machine may take seconds to start bun. */
const DEADLINE_MS = 30_000;

/** Starts `spoolctl ARGS` in a fresh terminal on this test's queue. */
function terminal(args: string[]): Tty {
  tty = new Tty(args, { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" }, width: 160, height: 60 });
  return tty;
}

/** The active (◆) action menu of a job: the flow waits for one key. */
const menu = (id: number) => new RegExp(`◆  Job ${id}: what now\\?`);

/** The group screen (several failure groups): `w` walks every job one by one, newest first. */
async function walkAll(t: Tty): Promise<string> {
  const screen = await screenShows(t, /◆ {2}\d+ dead and \d+ canceled jobs? in \d+ groups?, largest first: pick one/);
  t.keys("w");
  return screen;
}

/** A job that fails at once and is dead after one drain (a fresh drain per job fixes the death order). */
async function deadJob(marker: string): Promise<number> {
  const id = await addJob(
    q,
    "--max-retries",
    "0",
    "--",
    "sh",
    "-c",
    `echo out-${marker}; echo err-${marker} >&2; exit 3`,
  );
  await drain(q);
  expect((await q.job(id))?.state).toBe("dead");
  return id;
}

/** Every job, attempt and ledger row, as text: equal dumps mean nothing changed. */
async function dump(): Promise<{ jobs: string; attempts: string; events: string }> {
  const all = await q.snapshot();
  return { jobs: JSON.stringify(all.jobs), attempts: JSON.stringify(all.attempts), events: JSON.stringify(all.events) };
}

test.skipIf(!HAVE_TMUX)(
  "triage: skip one, retry the chosen dead job, view another's output and delete it after a confirm",
  async () => {
    const oldest = await deadJob("a");
    const middle = await deadJob("b");
    const newest = await deadJob("c");
    const oldestOutput = (await q.attempts(oldest)).flatMap((a) => [a.stdout_path, a.stderr_path]);
    for (const path of oldestOutput) expect(existsSync(path)).toBe(true);
    const t = terminal(["triage"]);

    // Three different stderr lines: three groups of one; walk them all, newest death first.
    expect(await walkAll(t)).toContain("3 dead and 0 canceled jobs in 3 groups");
    // The card shows the command, failure, exit code, budgets and tails.
    const card = await screenShows(t, menu(newest));
    expect(card).toContain(`Job ${newest} · dead · 1 of 3`);
    expect(card).toMatch(/failure +process_exit/);
    expect(card).toMatch(/exit code +3/);
    expect(card).toMatch(/attempts +1 attempt: 1 failed, no retries allowed /);
    expect(card).toContain("err-c");
    expect(card).toContain("out-c");
    t.keys("s");

    await screenShows(t, menu(middle));
    t.keys("r");
    await screenShows(t, `Retried job ${middle}; now queued`);

    await screenShows(t, menu(oldest));
    t.keys("v"); // the full output, then back to the same menu
    await screenShows(t, `=== job ${oldest} attempt 1 stdout ===`);
    await screenShows(t, menu(oldest));
    t.keys("d");
    await screenShows(t, new RegExp(`◆  Delete job ${oldest}, its 1 attempt,`));
    t.keys("y");
    const end = await screenShows(t, "EXIT=");
    expect(end).toContain(`Deleted job ${oldest} with its history and output.`);
    expect(end).toContain(`Retried job ${middle}; now queued.`);
    expect(end).toContain(`Skipped job ${newest}.`);
    expect(await exitCode(t)).toBe(0);

    expect((await q.job(newest))?.state).toBe("dead");
    const retried = (await q.job(middle))!;
    expect([retried.state, retried.attempts, retried.crashes, retried.finished_at]).toEqual(["queued", 0, 0, null]);
    expect(await q.eventNames(middle)).toEqual(["added", "claimed", "failed", "dead", "retried"]);
    expect(await q.job(oldest)).toBeNull();
    expect(await q.attempts(oldest)).toEqual([]);
    expect(await q.events(oldest)).toEqual([]);
    // Output files by the attempt rows' paths (whatever the spool's layout).
    for (const path of oldestOutput) expect(existsSync(path)).toBe(false);
    for (const a of await q.attempts(middle)) expect(existsSync(a.stdout_path)).toBe(true);
  },
);

test.skipIf(!HAVE_TMUX)(
  "triage: retry with a new timeout, a new retry budget and changed env; a bad value is refused in place",
  async () => {
    const envJob = await addJob(q, "--max-retries", "0", "--env", "KEEP=1", "--", "sh", "-c", "exit 4");
    const budgetJob = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 5");
    await drain(q);
    const timeoutJob = await deadJob("t");
    const t = terminal(["triage"]);
    await walkAll(t);

    await screenShows(t, menu(timeoutJob));
    t.keys("t");
    await screenShows(t, `◆  New timeout for job ${timeoutJob} (now 300s)`);
    t.keys("abc");
    t.keys("Enter");
    await screenShows(t, `invalid value for timeout: "abc"`); // refused under the field; nothing written
    expect((await q.job(timeoutJob))?.state).toBe("dead");
    t.keys("BSpace", "BSpace", "BSpace");
    t.keys("90s");
    t.keys("Enter");
    await screenShows(t, `Retried job ${timeoutJob} (timeout 300s → 90s); now queued`);

    // The other two died in one drain: take them in the order the flow shows them.
    const finishedAt = new Map<number, number>();
    for (const id of [budgetJob, envJob]) finishedAt.set(id, (await q.job(id))!.finished_at!);
    const order = [budgetJob, envJob].sort((a, b) => finishedAt.get(b)! - finishedAt.get(a)! || b - a);
    for (const id of order) {
      await screenShows(t, menu(id));
      if (id === budgetJob) {
        t.keys("b");
        await screenShows(t, `◆  New retry budget for job ${id} (now 0)`);
        t.keys("7");
        t.keys("Enter");
        await screenShows(t, `Retried job ${id} (retry budget 0 → 7); now queued`);
      } else {
        t.keys("e");
        await screenShows(t, `◆  Variable to set for job ${id}, K=V (it has KEEP)`);
        t.keys("GREETING=hello world");
        t.keys("Enter");
        await screenShows(t, "◆  Another variable, K=V (set so far: GREETING)");
        t.keys("Enter"); // empty: done
        await screenShows(t, `Retried job ${id} (env GREETING set); now queued`);
      }
    }
    expect(await exitCode(t)).toBe(0);

    const a = (await q.job(timeoutJob))!;
    expect([a.state, a.timeout_seconds]).toEqual(["queued", 90]);
    const b = (await q.job(budgetJob))!;
    expect([b.state, b.max_retries]).toEqual(["queued", 7]);
    const c = (await q.job(envJob))!;
    expect(c.state).toBe("queued");
    expect(c.env).toEqual({ KEEP: "1", GREETING: "hello world" });
    // The ledger says what changed; env by name only (values stay out of the ledger).
    const detail = async (id: number) => JSON.parse((await q.events(id)).find((e) => e.event === "retried")!.detail!);
    expect((await detail(timeoutJob)).changed).toEqual({ timeout_seconds: { from: 300, to: 90 } });
    expect((await detail(budgetJob)).changed).toEqual({ max_retries: { from: 0, to: 7 } });
    expect((await detail(envJob)).changed).toEqual({ env_set: ["GREETING"] });
  },
);

test.skipIf(!HAVE_TMUX)(
  "triage: Ctrl-C at a text prompt and at the delete confirm leaves every job row byte for byte unchanged, exit 0",
  async () => {
    const first = await deadJob("x");
    const second = await deadJob("y");
    const before = await dump();

    let t = terminal(["triage"]);
    await walkAll(t);
    await screenShows(t, menu(second));
    t.keys("t");
    await screenShows(t, `◆  New timeout for job ${second}`);
    t.keys("99s"); // typed but never submitted
    await screenShows(t, "99s");
    t.keys("C-c");
    let end = await screenShows(t, "EXIT=");
    expect(end).toContain("Interrupted: the job on screen was left as it was.");
    expect(end).toContain("Nothing changed.");
    expect(end).not.toMatch(/INTERNAL|\bat .*\.ts:\d+/); // no stack trace
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toEqual(before);
    t.close();

    t = terminal(["triage"]);
    await walkAll(t);
    await screenShows(t, menu(second));
    t.keys("s");
    await screenShows(t, menu(first));
    t.keys("d");
    await screenShows(t, `◆  Delete job ${first}`);
    t.keys("C-c");
    end = await screenShows(t, "EXIT=");
    expect(end).toContain("Interrupted");
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toEqual(before);
  },
);

test("off a terminal or under --json: triage and the pickers fail fast, never prompt", async () => {
  await deadJob("n");
  // stdin is not a terminal here (the helper ignores it) and stdout is a pipe. A prompt would be
  // said by its exit code and stderr below (or hang and time the test out): no clock is needed.
  const triage = await q.run(["triage"]);
  expect(triage.code).toBe(1);
  expect(triage.stderr).toContain("MISSING_REQUIRED: triage needs a terminal");
  expect(withoutSelection(q, triage.stderr)).toContain("spoolctl list --state dead");
  const triageJson = await q.json(["triage"]);
  expect([triageJson.code, triageJson.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(withoutSelection(q, triageJson.env.errors[0].remediation)).toContain("spoolctl retry ID");
  for (const verb of ["retry", "cancel"]) {
    const r = await q.json([verb]);
    expect([r.code, r.env.ok, r.env.errors[0].code]).toEqual([1, false, "MISSING_REQUIRED"]);
    const text = await q.run([verb]);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("MISSING_REQUIRED");
  }
});

test.skipIf(!HAVE_TMUX)(
  "on a terminal, --json still means no picker: retry without an ID is MISSING_REQUIRED at once",
  async () => {
    const t = terminal(["retry", "--json"]);
    expect(await exitCode(t)).toBe(1);
    expect(t.screen()).toContain('"code":"MISSING_REQUIRED"');
  },
);

test.skipIf(!HAVE_TMUX)(
  "retry picker on a terminal: the chosen dead job is requeued, the other stays dead",
  async () => {
    const older = await deadJob("p");
    const newer = await deadJob("q");
    const t = terminal(["retry"]);
    const list = await screenShows(t, "◆  Jobs to retry");
    // Newest death first: the cursor starts on `newer`; one Down reaches `older`.
    expect(list).toContain("echo out-p");
    expect(list.indexOf("echo out-q")).toBeGreaterThan(-1);
    expect(list.indexOf("echo out-q")).toBeLessThan(list.indexOf("echo out-p"));
    t.keys("Down");
    t.keys("Space");
    await screenShows(t, "◼"); // the row is ticked
    t.keys("Enter");
    await screenShows(t, `Retried job ${older}; now queued`);
    expect(await exitCode(t)).toBe(0);
    expect((await q.job(older))?.state).toBe("queued");
    expect((await q.job(newer))?.state).toBe("dead");
  },
);

test.skipIf(!HAVE_TMUX)("retry picker: Ctrl-C retries nothing and exits 0", async () => {
  await deadJob("z");
  const before = await dump();
  const t = terminal(["retry"]);
  await screenShows(t, "◆  Jobs to retry");
  t.keys("Space");
  await screenShows(t, "◼");
  t.keys("C-c");
  const end = await screenShows(t, "EXIT=");
  // One message: the picker's; the verb adds no "no jobs to retry" below it.
  expect(end).toContain("Canceled: nothing changed.");
  expect(end).not.toContain("no jobs to retry");
  expect(await exitCode(t)).toBe(0);
  expect(await dump()).toEqual(before);
});

test.skipIf(!HAVE_TMUX)(
  "cancel picker: Ctrl-C cancels nothing and says so once; an empty picker says so once",
  async () => {
    await addJob(q, "--", "true");
    const before = await dump();
    const t = terminal(["cancel"]);
    await screenShows(t, "◆  Jobs to cancel");
    t.keys("C-c");
    const end = await screenShows(t, "EXIT=");
    expect(end).toContain("Canceled: nothing changed.");
    expect(end).not.toContain("no jobs canceled");
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toEqual(before);
    t.close();
    // Nothing to retry: the picker's line alone.
    const none = terminal(["retry"]);
    const screen = await screenShows(none, "EXIT=0");
    expect(screen).toContain("no dead or canceled jobs to retry");
    expect(screen.match(/no .*to retry/g)).toHaveLength(1);
  },
);

test.skipIf(!HAVE_TMUX)(
  "cancel picker with --running: a running job needs the confirmation --yes would give",
  async () => {
    const gate = gatedJob(q, "picker");
    const running = await addJob(q, "--", ...gate.argv);
    const w = q.spawn(["work", "--once"]);
    workers.push(w);
    await waitFor(
      "the gated job to run",
      async () => gate.pid() !== null && (await q.job(running))?.state === "running",
      DEADLINE_MS,
    );
    const queued = await addJob(q, "--", "true");
    const t = terminal(["cancel", "--running"]);
    await screenShows(t, "◆  Jobs to cancel");
    t.keys("Space"); // the first row, then the second: both jobs
    t.keys("Down");
    t.keys("Space");
    await screenShows(t, /◼.*\n.*◼/);
    t.keys("Enter");
    await screenShows(t, new RegExp(`◆  Job ${running} is running: cancel anyway\\?`));
    t.keys("y");
    await screenShows(t, `Canceled job ${queued}`);
    expect(await exitCode(t)).toBe(0);
    expect((await q.job(queued))?.state).toBe("canceled");
    expect(await q.eventNames(running)).toContain("cancel_requested");
    gate.release();
  },
);
