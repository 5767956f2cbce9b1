/**
 * Triage at a narrow terminal and across lanes (issue 21 item 4;
 * docs/architecture.md "Triage"), in a REAL pseudo-terminal (tmux,
 * test/support/tmux.ts): at 80 columns each group takes one row whose signature
 * keeps its room (the lanes and times give way) and the group's card wraps
 * the signature instead of cutting it; the `Next:` hint after a retry drains
 * the lanes of the retried jobs (and following it runs them); "What changed"
 * lists each step once, in the order it happened.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { addJob, drain } from "./support/jobs.ts";
import { CLI, FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, shellQuote, Tty } from "./support/tmux.ts";

setDefaultTimeout(120_000);

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

function terminal(width: number): Tty {
  tty = new Tty(["triage"], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" }, width, height: 60 });
  return tty;
}

/** Adds `n` jobs to `lane` that fail once (no retries) printing `line` on stderr; returns their ids. */
async function failing(n: number, lane: string, line: string, code: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      await addJob(q, "--queue", lane, "--max-retries", "0", "--", "sh", "-c", `echo '${line}' >&2; exit ${code}`),
    );
  return ids;
}

const DEPLOY = "deploy failed: could not reach artifact registry at registry.example.com:443 after 5 tries";
const CACHE = "error: the build cache is corrupt; remove it and build again with a clean checkout please";

test.skipIf(!HAVE_TMUX)(
  "at 80 columns a group is one row that keeps its signature; a retry in lane deploy hints the drain of deploy",
  async () => {
    const deploy = await failing(3, "deploy", DEPLOY, 4);
    await failing(2, "default", CACHE, 2);
    await drain(q, "--queue", "deploy");
    await drain(q);
    const t = terminal(80);
    const screen = await screenShows(t, /◆ {2}5 dead and 0 canceled jobs in 2 groups/);
    const rows = screen.split("\n").filter((l) => /\[[12]\]/.test(l));
    expect(rows).toHaveLength(2);
    // One line each (the next line is the next option, not a wrapped tail), the signature
    // shown for at least 45 columns, and the lane kept beside it; the "last … ago" gave way.
    const lines = screen.split("\n");
    for (const row of rows) {
      expect(Bun.stringWidth(row)).toBeLessThanOrEqual(80);
      expect(lines[lines.indexOf(row) + 1]).toMatch(/^│ {2}[●○] \[/);
    }
    expect(rows[0]).toContain("3 jobs  process_exit · exit 4 · deploy failed: could not r");
    expect(rows[0]).toMatch(/… \(deploy\)$/);
    expect(rows[1]).toContain("2 jobs  process_exit · exit 2 · error: the build cache is");
    expect(rows[1]).toMatch(/… \(default\)$/);
    expect(screen).not.toContain("ago)");

    t.keys("1");
    // The card wraps the signature over its lines rather than cutting it.
    const card = await screenShows(t, "◆  Group of 3 jobs: what now?");
    expect(card).toMatch(/│ {2}signature {3}process_exit · exit 4 · deploy failed: could not reach +│/);
    expect(card).toMatch(/│ {14}artifact registry at <host> after <n> tries +│/);
    for (const l of card.split("\n")) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(80);
    t.keys("r");
    await screenShows(t, "◆  Retry all 3 jobs of this group?");
    t.keys("Enter");
    await screenShows(t, "◆  Group of 2 jobs: what now?"); // the one group left, at once
    t.keys("q");
    expect(await exitCode(t)).toBe(0);
    const end = t.screenJoined();
    const next = /Next: (spoolctl work (?:--db \S+ )?--queue deploy --drain) {2}\(runs the retried jobs\)/.exec(end);
    expect(next).not.toBeNull();

    for (const id of deploy) expect((await q.job(id))!.state).toBe("queued");
    // The hint is what runs them: its command drains lane deploy (they fail again: dead, 2 attempts).
    // Run as a shell reads it (the --db value may be quoted), with spoolctl as this checkout's CLI.
    const shell = Bun.spawn(["bash", "-c", `spoolctl() { bun ${shellQuote(CLI)} "$@"; }; ${next![1]}`], {
      env: q.env(FAST_KNOBS),
      cwd: q.dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(shell.stderr).text(), shell.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.stringContaining("drained lane deploy: 3 executed") });
    for (const id of deploy) expect(await q.job(id)).toMatchObject({ state: "dead", last_attempt_no: 2 });
  },
);

test.skipIf(!HAVE_TMUX)(
  "What changed lists a group delete once, in order; retries in two lanes hint a drain of each",
  async () => {
    const host = await failing(3, "default", "could not connect to host 7", 3);
    const cache = await failing(2, "default", CACHE, 2);
    const [deployJob] = await failing(1, "deploy", DEPLOY, 4);
    await drain(q);
    await drain(q, "--queue", "deploy");
    const t = terminal(160);
    await screenShows(t, /◆ {2}6 dead and 0 canceled jobs in 3 groups/);
    t.keys("2"); // the cache group (2 jobs)
    await screenShows(t, "◆  Group of 2 jobs: what now?");
    t.keys("d");
    await screenShows(t, /◆ {2}Delete all 2 jobs of this group/);
    t.keys("y");
    await screenShows(t, /◆ {2}4 dead and 0 canceled jobs in 2 groups/);
    t.keys("1"); // the host group (3 jobs)
    await screenShows(t, "◆  Group of 3 jobs: what now?");
    t.keys("r");
    await screenShows(t, "◆  Retry all 3 jobs of this group?");
    t.keys("Enter");
    // One group of one job left: its card at once.
    await screenShows(t, `◆  Job ${deployJob}: what now?`);
    t.keys("r");
    expect(await exitCode(t)).toBe(0);
    const end = t.screenJoined();
    const summary = end.slice(end.indexOf("What changed"));
    const steps = summary
      .split("\n")
      .map((l) => l.replace(/^│\s*/, "").replace(/\s*│$/, ""))
      .filter((l) => /^(Deleted|Retried|Skipped)/.test(l));
    expect(steps).toHaveLength(3);
    expect(steps[0]).toMatch(
      new RegExp(
        `^Deleted the 2 jobs of "process_exit · exit 2 · error: the build cache .*\\(${cache[1]}, ${cache[0]}\\)`,
      ),
    );
    expect(steps[1]).toMatch(/^Retried the 3 jobs of "process_exit · exit 3 · could not connect to host <n>"/);
    expect(steps[2]).toBe(`Retried job ${deployJob}; now queued.`);
    expect(end).toMatch(
      /Next: spoolctl work (--db \S+ )?--drain; spoolctl work (--db \S+ )?--queue deploy --drain {2}\(run the retried jobs of 2 lanes\)/,
    );
    for (const id of [...host, deployJob!]) expect((await q.job(id))!.state).toBe("queued");
    for (const id of cache) expect(await q.job(id)).toBeNull();
  },
);
