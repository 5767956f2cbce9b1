/**
 * Triage's failure groups (issue 12; docs/architecture.md "Triage") in a REAL
 * pseudo-terminal (tmux, test/support/tmux.ts): 30 dead jobs of 3 kinds show as 3
 * groups; a group retried with the arrow keys requeues exactly its jobs; Esc
 * goes back from a group to the list; Ctrl-C at a bulk confirm changes
 * nothing; "view the full output" through PAGER=cat and with no pager at all.
 * The queue is checked through the driver, the screen read with capture-pane,
 * every prompt awaited before it is answered.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, screenWhere, Tty } from "./support/tmux.ts";

setDefaultTimeout(120_000);

let tty: Tty | null = null;
const scratch: string[] = [];
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
});

function terminal(args: string[], env: Record<string, string> = {}, height = 60): Tty {
  tty = new Tty(args, { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1", ...env }, width: 160, height });
  return tty;
}

/** The three kinds of failure, by how many jobs of each are added. */
const KINDS = {
  host: { n: 12, argv: (i: number) => ["sh", "-c", `echo "could not connect to host ${i * 7}" >&2; exit 3`] },
  config: { n: 10, argv: (i: number) => ["sh", "-c", `echo "open /etc/app/cfg-${i}.json: no such file" >&2; exit 2`] },
  crash: { n: 8, argv: (i: number) => ["sh", "-c", `echo "worker-${i} segfault at 0x7f${i}a3c0" >&2; kill -SEGV $$`] },
};

/** Adds 30 jobs of the 3 kinds in one `add --from -` and drains them dead; returns the ids of each kind. */
async function thirtyDead(): Promise<Record<keyof typeof KINDS, number[]>> {
  const specs: { kind: keyof typeof KINDS; argv: string[] }[] = [];
  for (const [kind, k] of Object.entries(KINDS) as [keyof typeof KINDS, (typeof KINDS)["host"]][]) {
    for (let i = 0; i < k.n; i++) specs.push({ kind, argv: k.argv(i) });
  }
  // Interleaved, so a group is not a run of consecutive ids.
  specs.sort((a, b) => (a.argv[2]!.length % 3) - (b.argv[2]!.length % 3));
  const r = await q.json(["add", "--from", "-"], {
    stdin: specs.map((s) => JSON.stringify({ argv: s.argv, max_retries: 0 })).join("\n"),
  });
  expect(r.code).toBe(0);
  const ids = (r.env.data.jobs as { job_id: number }[]).map((j) => j.job_id);
  await drain(q);
  const out: Record<string, number[]> = { host: [], config: [], crash: [] };
  specs.forEach((s, i) => out[s.kind]!.push(ids[i]!));
  for (const job of await q.jobs()) expect(job.state).toBe("dead");
  return out as Record<keyof typeof KINDS, number[]>;
}

/** Every job, attempt and ledger row, as text: equal dumps mean nothing changed. */
async function dump(): Promise<string> {
  const all = await q.snapshot();
  return JSON.stringify([all.jobs, all.attempts, all.events]);
}

const listMenu = /◆ {2}30 dead and 0 canceled jobs in 3 groups, largest first: pick one/;

test.skipIf(!HAVE_TMUX)(
  "30 dead jobs of 3 kinds show as 3 groups, largest first; the arrow keys retry exactly the second group",
  async () => {
    const ids = await thirtyDead();
    const t = terminal(["triage"]);
    const screen = await screenShows(t, listMenu);
    // Largest first, with the masked signature (numbers, paths, hex ids masked).
    const rows = screen.split("\n").filter((l) => /\[\d\]/.test(l));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/\[1\] +12 jobs +process_exit · exit 3 · could not connect to host <n>/);
    expect(rows[1]).toMatch(/\[2\] +10 jobs +process_exit · exit 2 · open <path>: no such file/);
    expect(rows[2]).toMatch(/\[3\] +8 jobs +process_exit · signal 11 · worker-<n> segfault at <hex>/);
    expect(rows[0]).toContain("●"); // the cursor starts on the largest group

    t.keys("Down");
    await screenShows(t, /● \[2\]/);
    t.keys("Enter");
    const card = await screenShows(t, "◆  Group of 10 jobs: what now?");
    expect(card).toContain("Group 2 of 3 · 10 dead jobs");
    expect(card).toMatch(/example +job \d+: sh -c 'echo "open \/etc\/app\/cfg-\d+\.json: no such file"/);
    t.keys("Down"); // open → retry all
    await screenShows(t, /● \[r\] retry all 10/);
    t.keys("Enter");
    await screenShows(t, "◆  Retry all 10 jobs of this group?");
    t.keys("Enter"); // Yes is the default
    await screenShows(t, /Retried the 10 jobs of "process_exit · exit 2 · open <path>: no such file"/);
    // Back at the list, now 2 groups: quit.
    await screenShows(t, "◆  20 dead and 0 canceled jobs in 2 groups");
    t.keys("q");
    const end = await screenShows(t, "EXIT=");
    expect(end).toMatch(/Next: spoolctl work (--db \S+ )?--drain/); // with the queue it ran on
    expect(await exitCode(t)).toBe(0);

    const jobs = await q.jobs();
    const queued = jobs
      .filter((j) => j.state === "queued")
      .map((j) => j.id)
      .sort((a, b) => a - b);
    expect(queued).toEqual([...ids.config].sort((a, b) => a - b));
    for (const j of jobs.filter((x) => !ids.config.includes(x.id))) expect(j.state).toBe("dead");
    for (const id of ids.config)
      expect(await q.eventNames(id)).toEqual(["added", "claimed", "failed", "dead", "retried"]);
  },
);

test.skipIf(!HAVE_TMUX)(
  "Esc from a group goes back to the list; Ctrl-C at the bulk retry confirm changes nothing and exits 0",
  async () => {
    await thirtyDead();
    const before = await dump();
    const t = terminal(["triage"]);
    await screenShows(t, listMenu);
    t.keys("3"); // the hotkey picks the third group at once
    await screenShows(t, "◆  Group of 8 jobs: what now?");
    t.keys("Escape");
    // The list again, the cursor where it was.
    await screenWhere(t, "the list to be shown again", (s) => {
      const last = s.slice(s.lastIndexOf("◆"));
      return listMenu.test(last) && /● \[3\]/.test(last);
    });
    t.keys("1");
    await screenShows(t, "◆  Group of 12 jobs: what now?");
    t.keys("r");
    await screenShows(t, "◆  Retry all 12 jobs of this group?");
    t.keys("C-c");
    const end = await screenShows(t, "EXIT=");
    expect(end).toContain("Interrupted: the job on screen was left as it was.");
    expect(end).toContain("Nothing changed.");
    expect(end).not.toMatch(/\bat .*\.ts:\d+/);
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toBe(before);
  },
);

/** One dead job with a long, recognisable output; its id. */
async function deadWithOutput(): Promise<number> {
  const id = await addJob(
    q,
    "--max-retries",
    "0",
    "--",
    "sh",
    "-c",
    "for i in $(seq 1 5); do echo out-line-$i; done; echo err-last >&2; exit 4",
  );
  await drain(q);
  return id;
}

test.skipIf(!HAVE_TMUX)(
  "view the full output: PAGER=cat shows it through the pager, then the job's menu again",
  async () => {
    const id = await deadWithOutput();
    const t = terminal(["triage"], { PAGER: "cat" });
    await screenShows(t, `◆  Job ${id}: what now?`); // one job: its card at once, no group screen
    t.keys("v");
    // cat wrote it straight to the terminal: at the start of a line, not inside the prompt's frame.
    const shown = await screenShows(t, /^=== job \d+ attempt 1 stdout ===$/m);
    expect(shown).toMatch(/^out-line-5$/m);
    expect(shown).toMatch(/^err-last$/m);
    await screenWhere(
      t,
      "the menu again",
      (s) => s.split(`=== job ${id} attempt 1 stderr ===`)[1]?.includes(`◆  Job ${id}: what now?`) ?? false,
    );
    t.keys("q");
    expect(await exitCode(t)).toBe(0);
  },
);

test.skipIf(!HAVE_TMUX)(
  "view the full output with no pager (PAGER unset, no less on PATH): inline, inside the prompt's frame",
  async () => {
    const id = await deadWithOutput();
    const bin = mkdtempSync(join(tmpdir(), "spoolctl-nopager-"));
    scratch.push(bin);
    symlinkSync(Bun.which("bun")!, join(bin, "bun"));
    const t = terminal(["triage"], { PATH: bin });
    await screenShows(t, `◆  Job ${id}: what now?`);
    t.keys("v");
    const shown = await screenShows(t, /^│ {2}=== job \d+ attempt 1 stdout ===$/m);
    expect(shown).toMatch(/^│ {2}out-line-5$/m);
    expect(shown).not.toMatch(/^=== job/m);
    t.keys("q");
    expect(await exitCode(t)).toBe(0);
  },
);

test.skipIf(!HAVE_TMUX)(
  "group actions: retry all with a new timeout (each job changed), delete all after a confirm that counts what goes, skip; the summary lists all three",
  async () => {
    const ids = await thirtyDead();
    const crashOutput = (await Promise.all(ids.crash.map((id) => q.attempts(id)))).flat().map((a) => a.stderr_path);
    const t = terminal(["triage"]);
    await screenShows(t, listMenu);
    t.keys("1"); // 12 × could not connect
    await screenShows(t, "◆  Group of 12 jobs: what now?");
    t.keys("t");
    await screenShows(t, "◆  New timeout for the 12 jobs of this group (now 300s)");
    t.keys("90s", "Enter");
    await screenShows(t, "◆  Retry all 12 jobs of this group with timeout 90s?");
    t.keys("y");
    await screenShows(
      t,
      /Retried the 12 jobs of "process_exit · exit 3 · could not connect to host <n>" \(timeout 300s → 90s\)/,
    );

    await screenShows(t, "◆  18 dead and 0 canceled jobs in 2 groups");
    t.keys("2"); // now the 8 crashes (the 10 config failures are first)
    await screenShows(t, "◆  Group of 8 jobs: what now?");
    t.keys("d");
    // 8 jobs, one attempt and 4 events each (added, claimed, failed, dead).
    await screenShows(
      t,
      /◆ {2}Delete all 8 jobs of this group with their history: 8 attempts, 32 events and \d+(\.\d)? (B|KiB) of/,
    );
    t.keys("y");
    await screenShows(t, /Deleted the 8 jobs of "process_exit · signal 11 · worker-<n> segfault at <hex>"/);

    // One group left: its menu at once, no list.
    await screenShows(t, "◆  Group of 10 jobs: what now?");
    t.keys("s");
    const end = await screenShows(t, "EXIT=");
    const summary = end.slice(end.indexOf("What changed"));
    expect(summary).toMatch(
      /Retried the 12 jobs of "process_exit · exit 3 · could not connect to host <n>" \(timeout 300s → 90s\)/,
    );
    expect(summary).toMatch(
      /Deleted the 8 jobs of "process_exit · signal 11 · worker-<n> segfault at <hex>" .* with 8 attempts, 32 events/s,
    );
    expect(summary).toMatch(/Skipped the group "process_exit · exit 2 · open <path>: no such file" \(10 jobs\)/);
    expect(await exitCode(t)).toBe(0);

    for (const id of ids.host) expect(await q.job(id)).toMatchObject({ state: "queued", timeout_seconds: 90 });
    for (const id of ids.crash) expect(await q.job(id)).toBeNull();
    for (const path of crashOutput) expect(existsSync(path)).toBe(false);
    for (const id of ids.config) expect((await q.job(id))!.state).toBe("dead");
    const detail = JSON.parse((await q.events(ids.host[0]!)).find((e) => e.event === "retried")!.detail!);
    expect(detail.changed).toEqual({ timeout_seconds: { from: 300, to: 90 } });
  },
);

test.skipIf(!HAVE_TMUX)(
  "a list longer than the screen shows a window around the cursor; the hotkeys still reach every group",
  async () => {
    const words = [
      "alpha",
      "bravo",
      "charlie",
      "delta",
      "echo",
      "foxtrot",
      "golf",
      "hotel",
      "india",
      "juliet",
      "kilo",
      "lima",
      "mike",
      "november",
      "oscar",
    ];
    const r = await q.json(["add", "--from", "-"], {
      stdin: words
        .map((w) => JSON.stringify({ argv: ["sh", "-c", `echo "failed ${w}" >&2; exit 1`], max_retries: 0 }))
        .join("\n"),
    });
    expect(r.code).toBe(0);
    await drain(q);
    const t = terminal(["triage"], {}, 20);
    const first = await screenShows(t, "in 15 groups, largest first: pick one");
    expect(first).toMatch(/… \d+ more below/);
    expect(first).not.toContain("more above");
    expect(first.trimEnd().split("\n").length).toBeLessThanOrEqual(20);
    t.keys("Up"); // wraps to the last option, quit: the window follows the cursor
    const last = await screenShows(t, /● \[q\] quit/);
    expect(last).toMatch(/… \d+ more above/);
    t.keys("3"); // a hotkey picks a group whether or not it is in the window
    await screenShows(t, /◆ {2}Job \d+: what now\?/); // a group of one job: its card at once
    t.keys("C-c");
    expect(await exitCode(t)).toBe(0);
  },
);

test.skipIf(!HAVE_TMUX || !Bun.which("less"))(
  "Ctrl-C inside the pager is the pager's: less stays, q goes back to the job's menu, nothing changed",
  async () => {
    const id = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "seq 1 500; echo boom >&2; exit 9");
    await drain(q);
    const before = await dump();
    const t = terminal(["triage"], { PAGER: "less" }, 30);
    await screenShows(t, `◆  Job ${id}: what now?`);
    t.keys("v");
    await screenShows(t, /^:$/m); // less's prompt: more than one screen of output
    t.keys("C-c");
    // less flushes the keys typed before it handled the interrupt: G (to the end, harmless to
    // repeat) until less shows (END) proves it is still there and reading keys again.
    await screenWhere(t, "less to stay after Ctrl-C and go to the end", (s) => {
      if (s.includes("EXIT=")) throw new Error(`the session ended on Ctrl-C in less:\n${s}`);
      if (/\(END\)/.test(s)) return true;
      t.keys("G");
      return false;
    });
    t.keys("q");
    await screenShows(t, new RegExp(`◆  Job ${id}: what now\\?`));
    t.keys("q");
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toBe(before);
  },
);

test.skipIf(!HAVE_TMUX)(
  "Esc on a card goes back one level, never skips, never ends: a walked group's card → its menu → the list; a one-job card → the list; only the list's Esc ends",
  async () => {
    // A group of 3 (exit 5) and a group of 1 (exit 6).
    const three = [];
    for (let i = 0; i < 3; i++)
      three.push(
        await addJob(q, "--max-retries", "0", "--", "sh", "-c", `echo "disk quota ${i} exceeded" >&2; exit 5`),
      );
    const one = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo lonely >&2; exit 6");
    await drain(q);
    const before = await dump();
    const list = "◆  4 dead and 0 canceled jobs in 2 groups, largest first: pick one";
    const t = terminal(["triage"]);
    await screenShows(t, list);
    t.keys("1");
    await screenShows(t, "◆  Group of 3 jobs: what now?");
    t.keys("o");
    await screenShows(t, /◆ {2}Job \d+: what now\?/);
    t.keys("Escape");
    // The group's menu again (after the card), not the other group's card, not a skip.
    const menuAgain = await screenWhere(t, "the group's menu after Esc on its card", (s) => {
      const after = s.slice(s.lastIndexOf("what now?") - 40);
      return after.includes("◆  Group of 3 jobs: what now?");
    });
    expect(menuAgain).toMatch(/■ {2}Job \d+: what now\?\n│ {2}back/);
    expect(menuAgain).not.toContain(`Job ${one} ·`);
    t.keys("Escape");
    await screenWhere(t, "the list after Esc on the group's menu", (s) => s.slice(s.lastIndexOf("◆")).startsWith(list));
    t.keys("2"); // the group of one: its card at once
    await screenShows(t, `◆  Job ${one}: what now?`);
    t.keys("Escape");
    await screenWhere(
      t,
      "the list after Esc on the one-job card",
      (s) => s.slice(s.lastIndexOf("◆")).startsWith(list) && !s.includes("EXIT="),
    );
    t.keys("Escape"); // the top level: the only Esc that ends
    const end = await screenShows(t, "EXIT=");
    expect(end).toContain("Nothing changed.");
    expect(await exitCode(t)).toBe(0);
    expect(await dump()).toBe(before);
    for (const id of [...three, one]) expect((await q.job(id))!.state).toBe("dead");
  },
);

test.skipIf(!HAVE_TMUX)("one dead job: Esc on its card shows the list (of one group), whose Esc ends", async () => {
  const id = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo alone >&2; exit 7");
  await drain(q);
  const t = terminal(["triage"]);
  await screenShows(t, `◆  Job ${id}: what now?`);
  t.keys("Escape");
  await screenWhere(
    t,
    "the list after Esc on the only card",
    (s) => s.slice(s.lastIndexOf("◆")).startsWith("◆  1 dead and 0 canceled jobs in 1 group") && !s.includes("EXIT="),
  );
  t.keys("Escape");
  expect(await exitCode(t)).toBe(0);
  expect((await q.job(id))!.state).toBe("dead");
});

test.skipIf(!HAVE_TMUX || !Bun.which("less"))(
  "view with less (PAGER unset): short output prints and the menu comes back at once; long output's page is cleared on q",
  async () => {
    const short = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo short-out; echo short-err >&2; exit 3");
    const long = await addJob(
      q,
      "--max-retries",
      "0",
      "--",
      "sh",
      "-c",
      "seq 1 500 | sed 's/^/long-line-/'; echo boom >&2; exit 9",
    );
    await drain(q);
    const t = terminal(["triage"], {}, 30);
    await screenShows(t, "in 2 groups, largest first: pick one");
    t.keys("w"); // every job, newest first: the long one, then the short one
    await screenShows(t, `◆  Job ${long}: what now?`);
    t.keys("v");
    await screenShows(t, /^:$/m); // less's prompt: more than one screen
    t.keys("q");
    // The session's screen again, without less's last page.
    const after = await screenWhere(
      t,
      "the menu after quitting less",
      (s) => s.slice(s.lastIndexOf("◆")).startsWith(`◆  Job ${long}: what now?`) && !/^:$/m.test(s),
    );
    expect(after).not.toMatch(/^long-line-\d+$/m); // with LESS=FRX its page (lines 1-29) stayed above the menu
    t.keys("s");
    await screenShows(t, `◆  Job ${short}: what now?`);
    t.keys("v");
    // Fits on one screen: printed, less gone, the menu again without a key.
    await screenWhere(t, "the short output, then the menu", (s) => {
      const i = s.lastIndexOf(`=== job ${short} attempt 1 stderr ===`);
      return i !== -1 && /^short-err$/m.test(s.slice(i)) && s.slice(i).includes(`◆  Job ${short}: what now?`);
    });
    t.keys("q");
    expect(await exitCode(t)).toBe(0);
  },
);
