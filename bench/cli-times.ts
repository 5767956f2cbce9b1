/**
 * Whole-process wall times of CLI calls, interleaved sample by sample:
 * `bun -e 0` (the runtime floor), and `--version`, `add`, `status`, `list` for
 * each variant of the CLI: the packed bundle of this checkout (`bun run
 * build`, what `bunx spoolctl` runs), its src/cli.ts, and the "before"
 * checkout's src/cli.ts; on a small queue, and on 1,000,000 jobs in SQLite
 * and in PostgreSQL. Plus the in-process time of the reads on the large
 * SQLite queue (the CLI's `main(argv)` called warm in this process), and the
 * client calls of task-spooler and nq.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type BuildReport, buildLargeDb } from "./build-1m.ts";
import { buildLargePg } from "./build-1m-pg.ts";
import { clientAddMs, NQ, TSP, tspUsable } from "./compare.ts";
import { BUN, fmt, median, ndjson, run, tempDir, writeFile } from "./lib.ts";
import { type Cli, commitOf, freshQueue, runCliOk, spoolEnv } from "./queues.ts";

/** A way to start the CLI: an entry file and the checkout it belongs to. */
export interface Variant {
  label: string;
  cli: Cli;
  entry: string;
}

/** Wall and CPU times of one command, by variant (ms per sample). */
export interface TimedCommand {
  name: string;
  /** variant label (or "bun", "tsp", "nq") → wall ms per sample. */
  ms: Record<string, number[]>;
  /** user + sys ms per sample. */
  cpu: Record<string, number[]>;
}

/** The CLI section: small-queue and large-queue times, builds, in-process reads, other queues' clients. */
export interface CliData {
  variants: { label: string; entry: string; commit: string }[];
  small: TimedCommand[];
  large: TimedCommand[];
  largePg: TimedCommand[];
  builds: Record<string, BuildReport>;
  inProcess: { name: string; ms: number[] }[];
  /** The same in-process reads on the large PostgreSQL queue. */
  inProcessPg: { name: string; ms: number[] }[];
  others: Record<string, number[]>;
}

/** The variants: this checkout bundled (its own `bun run build`) and from source; the before checkout from source. */
export async function variants(clis: Cli[], log: (m: string) => void): Promise<Variant[]> {
  const out: Variant[] = [];
  const after = clis[0]!;
  const root = resolve(after.path, "../..");
  const build = await run([BUN, "run", "build"], { cwd: root });
  if (build.code === 0 && existsSync(join(root, "dist/cli.js")))
    out.push({ label: "after (packed bundle)", cli: after, entry: join(root, "dist/cli.js") });
  else log(`no bundle: \`bun run build\` in ${root} exited ${build.code} ${build.stderr.slice(0, 200)}`);
  out.push({ label: "after (src/cli.ts)", cli: after, entry: after.path });
  for (const cli of clis.slice(1)) out.push({ label: `${cli.label} (src/cli.ts)`, cli, entry: cli.path });
  return out;
}

/**
 * Times `commands` for every variant, interleaved: sample i runs every
 * command of every variant once (and `bun -e 0` first) before sample i+1.
 * `args(v)` gives the argv of a command for variant v (its own queue).
 */
async function interleaved(
  vs: Variant[],
  commands: { name: string; args: (v: Variant) => string[] | null }[],
  samples: number,
  withFloor: boolean,
): Promise<TimedCommand[]> {
  const out = commands.map((c) => ({
    name: c.name,
    ms: {} as Record<string, number[]>,
    cpu: {} as Record<string, number[]>,
  }));
  const floor: TimedCommand = { name: "bun -e 0 (Bun start-up)", ms: { bun: [] }, cpu: { bun: [] } };
  for (let i = 0; i < samples; i++) {
    if (withFloor) {
      const r = await run([BUN, "-e", "0"], { quiet: true });
      floor.ms.bun!.push(r.ms);
      floor.cpu.bun!.push(r.cpuMs);
    }
    for (const [k, c] of commands.entries()) {
      for (const v of i % 2 ? [...vs].reverse() : vs) {
        const args = c.args(v);
        if (!args) continue;
        const r = await run([BUN, v.entry, ...args], { quiet: true, env: spoolEnv() });
        if (r.code !== 0) throw new Error(`${v.label}: ${c.name} exited ${r.code}`);
        (out[k]!.ms[v.label] ??= []).push(r.ms);
        (out[k]!.cpu[v.label] ??= []).push(r.cpuMs);
      }
    }
  }
  return withFloor ? [floor, ...out] : out;
}

/**
 * Whole-process times of the CLI variants on a small queue and on large
 * SQLite (per checkout) and PostgreSQL (this checkout) queues, and the
 * in-process reads; `largeDir` keeps and reuses the large SQLite queues per commit.
 */
export async function cliTimes(o: {
  clis: Cli[];
  samples: number;
  /** Samples of the small-queue start-up rows (cheap, and noisy on a shared machine): default `samples`. */
  startSamples?: number;
  large: number;
  pg: boolean;
  compare: boolean;
  largeDir?: string;
  log: (m: string) => void;
}): Promise<CliData> {
  const vs = await variants(o.clis, o.log);
  const d: CliData = {
    variants: vs.map((v) => ({ label: v.label, entry: v.entry, commit: commitOf(v.cli) })),
    small: [],
    large: [],
    largePg: [],
    builds: {},
    inProcess: [],
    inProcessPg: [],
    others: {},
  };
  // A small queue per checkout (a newer schema is refused by an older checkout).
  const small: Record<string, string> = {};
  for (const cli of o.clis) {
    const q = await freshQueue("sqlite", "cli-small");
    await runCliOk(
      cli,
      ["add", "--db", q.db, "--from", writeFile(join(tempDir("jobs"), "j.ndjson"), ndjson(100, ["true"]))],
      { quiet: true },
    );
    small[cli.label] = q.db;
  }
  d.small = await interleaved(
    vs,
    [
      { name: "--version", args: () => ["--version"] },
      { name: "add (100-job queue)", args: (v) => ["add", "--db", small[v.cli.label]!, "--", "true"] },
      { name: "status (100-job queue)", args: (v) => ["status", "--db", small[v.cli.label]!] },
      { name: "list (100-job queue)", args: (v) => ["list", "--db", small[v.cli.label]!] },
    ],
    o.startSamples ?? o.samples,
    true,
  );
  o.log(
    `start-up: ${d.small
      .map(
        (c) =>
          `${c.name} ${Object.entries(c.ms)
            .map(([k, v]) => `${k} ${fmt(median(v))}`)
            .join(" / ")}`,
      )
      .join("; ")}`,
  );
  if (o.compare && TSP && tspUsable())
    d.others["tsp true (task-spooler's client, idle server)"] = await clientAddMs("tsp", o.samples);
  if (o.compare && NQ) d.others["nq true (nq's client)"] = await clientAddMs("nq", o.samples);

  if (o.large > 0) {
    const tag = `${(o.large / 1e6).toLocaleString("en")}M`;
    const large: Record<string, string> = {};
    for (const cli of o.clis) {
      const path = o.largeDir
        ? join(o.largeDir, `large-${o.large}-${commitOf(cli)}.db`)
        : join(tempDir("large"), "large.db");
      if (o.largeDir && existsSync(path) && !commitOf(cli).endsWith("+dirty")) o.log(`reusing ${path}`);
      else {
        o.log(`building a ${o.large.toLocaleString("en")}-job SQLite queue for ${cli.label}`);
        d.builds[`${cli.label} SQLite`] = await buildLargeDb(path, o.large, cli.path);
      }
      large[cli.label] = path;
      await runCliOk(cli, ["status", "--db", path], { quiet: true }); // warm the page cache, as a queue in use would be
    }
    d.large = await interleaved(
      vs,
      [
        { name: `status (${tag} jobs)`, args: (v) => ["status", "--db", large[v.cli.label]!] },
        { name: `status --json (${tag} jobs)`, args: (v) => ["status", "--db", large[v.cli.label]!, "--json"] },
        { name: `list (${tag} jobs, 50 newest)`, args: (v) => ["list", "--db", large[v.cli.label]!] },
        {
          name: `list --state dead (${tag} jobs)`,
          args: (v) => ["list", "--db", large[v.cli.label]!, "--state", "dead"],
        },
        { name: `add (${tag}-job queue)`, args: (v) => ["add", "--db", large[v.cli.label]!, "--", "true"] },
      ],
      Math.min(o.samples, 10),
      false,
    );
    d.inProcess = await inProcessReads(o.clis[0]!.path, large[o.clis[0]!.label]!, Math.min(o.samples, 10), o.large);
    if (o.pg) {
      // One PostgreSQL queue, made by this checkout: an older checkout refuses its newer schema.
      const q = await freshQueue("postgres", "large");
      o.log(`building a ${o.large.toLocaleString("en")}-job PostgreSQL queue`);
      d.builds["after PostgreSQL"] = await buildLargePg(q.db, o.large, o.clis[0]!.path, spoolEnv());
      await q.close();
      const pgVariants = vs.filter((v) => v.cli === o.clis[0]);
      d.largePg = await interleaved(
        pgVariants,
        [
          { name: `status (${tag} jobs, PostgreSQL)`, args: () => ["status", "--db", q.db] },
          { name: `status --json (${tag} jobs, PostgreSQL)`, args: () => ["status", "--db", q.db, "--json"] },
          { name: `list (${tag} jobs, PostgreSQL)`, args: () => ["list", "--db", q.db] },
          {
            name: `list --state dead (${tag} jobs, PostgreSQL)`,
            args: () => ["list", "--db", q.db, "--state", "dead"],
          },
          { name: `add (${tag}-job PostgreSQL queue)`, args: () => ["add", "--db", q.db, "--", "true"] },
        ],
        Math.min(o.samples, 10),
        false,
      );
      d.inProcessPg = await inProcessReads(o.clis[0]!.path, q.db, Math.min(o.samples, 10), o.large);
    }
  }
  return d;
}

/**
 * In-process: the CLI's own `main(argv)` called repeatedly, warm, in a child
 * Bun process (bench/in-process.ts): open, schema
 * check, reads and render without Bun start-up and module loading (issue 13
 * item 5: under 60 ms). `show` reads the job in the middle of the id range.
 */
async function inProcessReads(
  cliPath: string,
  dbPath: string,
  n: number,
  jobs: number,
): Promise<{ name: string; ms: number[] }[]> {
  const file = join(tempDir("in-process"), "out.json");
  const r = await run(
    [BUN, resolve(import.meta.dir, "in-process.ts"), cliPath, dbPath, String(n), file, String(Math.ceil(jobs / 2))],
    { env: spoolEnv() },
  );
  if (r.code !== 0) throw new Error(`in-process reads failed: ${r.stderr.slice(0, 500)}`);
  return JSON.parse(readFileSync(file, "utf8"));
}
