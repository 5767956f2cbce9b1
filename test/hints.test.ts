/**
 * Every suggested command keeps the queue it was given (README "Where the
 * queue lives", src/commands/selection.ts): run with `--db X` (and nothing in
 * SPOOLCTL_DB), every remediation, warning, `commands` entry, `feedback`'s next
 * command and triage's `Next:` line that names a spoolctl command names X.
 * Run with SPOOLCTL_DB=X the same; from the project folder (no selection) they
 * stay short.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { selectionFlags } from "../src/commands/selection.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { HAVE_TMUX, Tty } from "./support/tmux.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

/** The env of a run that selects the queue by --db alone. */
const NO_ENV = { SPOOLCTL_DB: "" };

/** Every hint-bearing text of an envelope: error remediations, warnings, commands, data.remediation. */
function hints(env: any): string[] {
  return [
    ...env.errors.map((e: any) => e.remediation),
    ...env.warnings.map((w: any) => w.message),
    ...env.commands,
    ...(typeof env.data?.remediation === "string" ? [env.data.remediation] : []),
  ];
}

/** The commands each hint names: `spoolctl VERB…` up to the next double space or parenthesis. */
function commandsIn(text: string): string[] {
  return [...text.matchAll(/spoolctl (?:[a-z]+)(?: [^ ()]+)*/g)].map((m) => m[0]);
}

/** Commands that make errors, warnings and hints; every one is run with --json first and the queue given by `--db`. */
function battery(id: { dead: number; queued: number; done: number }): string[][] {
  return [
    ["show", "999"],
    ["show"],
    ["output", "999"],
    ["output", String(id.done), "--attempt", "9"],
    ["feedback", "999"],
    ["feedback", String(id.dead)],
    ["feedback", String(id.queued)],
    ["feedback", String(id.done)],
    ["retry", String(id.done)],
    ["retry"],
    ["retry", "--state", "dead"],
    ["cancel", String(id.dead)],
    ["cancel", String(id.done)],
    ["cancel"],
    ["wait"],
    ["wait", String(id.queued), "--timeout", "0.1"],
    ["triage"],
    ["stop", "--worker-id", "nobody"],
    ["prune", "--older-than", "1d"],
    ["config", "set", "nope", "1"],
    ["config", "get"],
    ["completion"],
    ["add", "--", "a && b"],
    ["add", "echo", "hi"],
    ["add", "ls", "-la"],
    ["add"],
    ["list", "--limit", "1"],
    ["events", "--limit", "1"],
  ];
}

async function seed(db: string, env: Record<string, string>) {
  const add = async (...args: string[]) =>
    (await q.run(["add", "--json", "--db", db, ...args], { env })).json.data.job_id as number;
  const dead = await add("--max-retries", "0", "--", "false");
  const done = await add("--", "true");
  await q.run(["work", "--drain", "--db", db], { env });
  const queued = await add("--after", "1h", "--", "true");
  return { dead, done, queued };
}

test("with --db X, every suggested command names X (errors, warnings, commands, feedback's next)", async () => {
  const db = `${q.dir}/elsewhere/my queue.db`;
  const flags = selectionFlags({ dbPath: db, source: "flag" });
  expect(flags).toBe(`--db '${db}'`);
  const id = await seed(db, NO_ENV);
  const seen: string[] = [];
  for (const args of battery(id)) {
    const r = await q.run(
      [
        ...args.slice(0, args[0] === "config" ? 2 : 1),
        "--json",
        "--db",
        db,
        ...args.slice(args[0] === "config" ? 2 : 1),
      ],
      { env: NO_ENV },
    );
    const env = JSON.parse(r.stdout);
    for (const hint of hints(env))
      for (const command of commandsIn(hint)) {
        seen.push(command);
        expect(`${args.join(" ")}: ${command}`).toContain(flags);
      }
  }
  // The battery did reach the hints it is about.
  for (const verb of ["list", "retry", "work", "show", "wait", "add"])
    expect(seen.some((c) => c.startsWith(`spoolctl ${verb} `))).toBe(true);
  // Text output: the same remediations, feedback's next line, list's "more" line, workers' hint.
  const text = async (...args: string[]) => await q.run([args[0]!, "--db", db, ...args.slice(1)], { env: NO_ENV });
  expect((await text("show", "999")).stderr).toContain(`spoolctl list ${flags}`);
  expect((await text("feedback", String(id.dead))).stdout).toContain(`next: spoolctl retry ${flags} ${id.dead}`);
  expect((await text("list", "--limit", "1")).stdout).toContain(`(more: spoolctl list ${flags} --limit 1 --cursor`);
  expect((await text("workers")).stdout).toContain(`spoolctl workers ${flags} --all`);
  // Following a hint reaches the same queue: it names the dead job.
  const retry = (await text("feedback", String(id.dead))).stdout.match(/next: (spoolctl .*)/)![1]!;
  const followed = Bun.spawnSync(["bash", "-c", retry.replace(/^spoolctl/, `bun ${process.cwd()}/src/cli.ts`)], {
    cwd: q.dir,
    env: q.env(NO_ENV),
  });
  expect([followed.exitCode, followed.stdout.toString()]).toEqual([0, `Retried job ${id.dead}; now queued\n`]);
});

test("with SPOOLCTL_DB=X the hints name X too; from the project folder (no selection) they stay as they are", async () => {
  const db = `${q.dir}/by-env.db`;
  const id = await seed(db, { SPOOLCTL_DB: db });
  const viaEnv = await q.run(["feedback", "--json", String(id.dead)], { env: { SPOOLCTL_DB: db } });
  expect(viaEnv.json.data.remediation).toBe(`spoolctl retry --db ${db} ${id.dead}`);
  const project = await q.run(["show", "--json", "999"], { env: NO_ENV });
  expect(project.json.errors[0].remediation).toBe("run: spoolctl list  (to see job ids)");
});

test.skipIf(!HAVE_TMUX)("triage started with --db X ends with Next: spoolctl work --db X --drain", async () => {
  const db = `${q.dir}/triage.db`;
  await seed(db, NO_ENV);
  tty = new Tty(["triage", "--db", db], { cwd: q.dir, env: { NO_COLOR: "1" }, width: 160, height: 60 });
  const shows = (pattern: string) =>
    waitFor(`the screen to show ${pattern}`, () => (tty!.screen().includes(pattern) ? true : null), 30_000, 150);
  await shows("what now?");
  tty.keys("r");
  await shows(`Next: spoolctl work --db ${db} --drain`);
});

test("a missing flag's hint repeats the words already given, so it runs as shown", async () => {
  const r = await q.json(["lane", "set", "gpu"]);
  expect(r.env.errors[0].code).toBe("MISSING_REQUIRED");
  expect(r.env.errors[0].remediation).toMatch(/^spoolctl lane set (--db \S+ )?gpu --slots N /);
  // With nothing given, the placeholder stays.
  expect((await q.json(["lane", "set"])).env.errors[0].remediation).toMatch(/ LANE --slots N /);
});
