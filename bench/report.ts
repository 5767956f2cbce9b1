/**
 * The benchmark's markdown report: one table per section, "after" (this
 * checkout) beside "before" (when measured) and beside the floors and the
 * other queues, then the targets of issue 13 and issue 9 with what was
 * reached. Figures are medians over interleaved rounds/samples.
 */
import type { CliData, TimedCommand } from "./cli-times.ts";
import type { LatencyData, SpoolLatency } from "./latency.ts";
import { fmt, median, min, percentile } from "./lib.ts";
import { type ProfileResult, renderProfile } from "./profile.ts";
import type { RssData } from "./rss.ts";
import { type BacklogData, rateOf, type ThroughputData } from "./throughput.ts";

/** Every section's data (absent when the section did not run) and the machine description. */
export interface ReportInput {
  machine: Record<string, string>;
  /** Cores of the machine (for the CPU-busy share). */
  nproc: number;
  labels: string[];
  throughput?: ThroughputData;
  backlog?: BacklogData;
  latency?: LatencyData;
  cli?: CliData;
  rss?: RssData;
  profiles: ProfileResult[];
}

const perSec = (n: number, ms: number) => n / (ms / 1000);
const mib = (b: number) => b / 2 ** 20;
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${fmt(a / b, 2)}×` : "";

/**
 * The one-table summary: before beside after, and beside the floor and the
 * other queues where they measure the same thing (medians from the sections
 * below).
 */
function summary(r: ReportInput): string[] {
  const [after, before] = [r.labels[0]!, r.labels[1]];
  const rows: string[][] = [];
  const t = r.throughput;
  const rate = (label: string | undefined, key: string) => (label && t ? rateOf(t.runs[label]?.[key], t.jobs) : NaN);
  const n0 = (x: number) => fmt(x, 0);
  const other = (name: string) => (t?.others[name]?.length ? n0(perSec(t.otherJobs, median(t.others[name]!))) : "");
  if (t) {
    rows.push([
      `drain ${t.jobs} \`true\`, 1 worker (SQLite), jobs/s`,
      n0(rate(before, "sqlite:w1c1")),
      n0(rate(after, "sqlite:w1c1")),
      `${n0(perSec(t.jobs, median(t.floors.seq)))} (1 at a time)`,
      other("task-spooler (tsp -S 1)"),
      other("nq (one job at a time)"),
    ]);
    rows.push([
      `drain, 1 worker \`--concurrency 4\` (SQLite)`,
      n0(rate(before, "sqlite:w1c4")),
      n0(rate(after, "sqlite:w1c4")),
      `${n0(perSec(t.jobs, median(t.floors.par4)))} (4 in flight)`,
      other("task-spooler (tsp -S 4)"),
      "",
    ]);
    const ws = t.scenarios.filter((s) => s.engine === "sqlite" && s.concurrency === 1).map((s) => s.workers);
    const scale = (label: string | undefined, engine: string, list: number[]) =>
      list.map((w) => n0(rate(label, `${engine}:w${w}c1`))).join(" / ");
    rows.push([
      `${ws.join(" / ")} workers (SQLite)`,
      scale(before, "sqlite", ws),
      scale(after, "sqlite", ws),
      "",
      "",
      "",
    ]);
    const pw = t.scenarios
      .filter((s) => s.engine === "postgres" && !s.durable && s.concurrency === 1)
      .map((s) => s.workers);
    if (pw.length) {
      rows.push([
        `PostgreSQL: ${pw.join(" / ")} workers`,
        scale(before, "postgres", pw),
        scale(after, "postgres", pw),
        "",
        "",
        "",
      ]);
      rows.push([
        "PostgreSQL: 1 worker `--concurrency 4`",
        n0(rate(before, "postgres:w1c4")),
        n0(rate(after, "postgres:w1c4")),
        "",
        "",
        "",
      ]);
    }
  }
  if (t) {
    const cpu = (label: string | undefined, key: string) => {
      const runs = label ? t.runs[label]?.[key] : undefined;
      return runs?.length ? fmt(median(runs.map((x) => x.cpuMs)) / t.jobs, 2) : "";
    };
    const last = Math.max(...t.scenarios.filter((s) => s.engine === "sqlite").map((s) => s.workers));
    rows.push([
      `worker CPU ms per job (rusage, children included): 1 / ${last} workers (SQLite)`,
      `${cpu(before, "sqlite:w1c1")} / ${cpu(before, `sqlite:w${last}c1`)}`,
      `${cpu(after, "sqlite:w1c1")} / ${cpu(after, `sqlite:w${last}c1`)}`,
      "",
      "",
      "",
    ]);
  }
  const p4 = r.profiles.find((p) => p.concurrency === 4);
  if (p4)
    rows.push([
      "worker CPU ms per job in-process (`--concurrency 4`, children excluded)",
      "",
      fmt(p4.cpuMs / p4.jobs, 2),
      "",
      "",
      "",
    ]);
  const b = r.backlog;
  if (b) {
    const [small, big] = [Math.min(...b.sizes), Math.max(...b.sizes)];
    const cell = (l?: string) =>
      l ? `${n0(median(b.rates[l]?.[big] ?? []))} vs ${n0(median(b.rates[l]?.[small] ?? []))}` : "";
    rows.push([
      `drain from ${big.toLocaleString("en")} vs ${small.toLocaleString("en")} queued, jobs/s`,
      cell(before),
      cell(after),
      "",
      "",
      "",
    ]);
  }
  const l = r.latency;
  if (l) {
    const fe = (name: string) =>
      l.samples[name]?.length
        ? `${fmt(median(l.samples[name]!.map((x) => x.fromSpawn)))} / ${fmt(median(l.samples[name]!.map((x) => x.fromExit)))}`
        : "";
    rows.push([
      "pick-up from `add`'s start / its exit, SQLite, ms",
      fe(`${before} SQLite`),
      fe(`${after} SQLite`),
      `${fmt(median(l.stampCost))} (the probe alone)`,
      fe("tsp"),
      fe("nq"),
    ]);
    if (l.samples[`${after} PostgreSQL`])
      rows.push([
        "pick-up from `add`'s start / its exit, PostgreSQL (NOTIFY), ms",
        fe(`${before} PostgreSQL`),
        fe(`${after} PostgreSQL`),
        "",
        "",
        "",
      ]);
  }
  const c = r.cli;
  if (c) {
    const [floorRow, ...small] = c.small;
    const get = (rowsIn: TimedCommand[], prefix: string, v: string | undefined) => {
      const row = rowsIn.find((x) => x.name.startsWith(prefix));
      return v && row?.ms[v]?.length ? fmt(median(row.ms[v]!)) : "";
    };
    const bundle = c.variants.find((v) => v.label.includes("bundle"))?.label;
    const src = `${after} (src/cli.ts)`;
    const bsrc = before ? `${before} (src/cli.ts)` : undefined;
    const both = (rowsIn: TimedCommand[], prefix: string) =>
      `${get(rowsIn, prefix, bundle)} (src ${get(rowsIn, prefix, src)})`;
    rows.push([
      "`add` whole process, ms (after: bundle, src)",
      get(small, "add", bsrc),
      both(small, "add"),
      `${fmt(median(floorRow?.ms.bun ?? []))} (\`bun -e 0\`)`,
      c.others["tsp true (task-spooler's client, idle server)"]
        ? fmt(median(c.others["tsp true (task-spooler's client, idle server)"]!))
        : "",
      c.others["nq true (nq's client)"] ? fmt(median(c.others["nq true (nq's client)"]!)) : "",
    ]);
    rows.push(["`--version`, ms", get(small, "--version", bsrc), both(small, "--version"), "", "", ""]);
    if (c.large.length) {
      rows.push([
        "`status` / `list` on the large SQLite queue, ms",
        `${get(c.large, "status (", bsrc)} / ${get(c.large, "list (", bsrc)}`,
        `${get(c.large, "status (", bundle)} / ${get(c.large, "list (", bundle)}`,
        "",
        "",
        "",
      ]);
    }
    if (c.largePg.length)
      rows.push([
        "`status` / `list` on the large PostgreSQL queue, ms",
        "",
        `${get(c.largePg, "status (", bundle)} / ${get(c.largePg, "list (", bundle)}`,
        "",
        "",
        "",
      ]);
  }
  const m = r.rss;
  if (m) {
    const k = Object.keys(m.cases).find((x) => x.includes("--concurrency 4, SQLite"));
    const v = (l?: string) => (k && l && m.cases[k]![l] ? fmt(mib(median(m.cases[k]![l]!))) : "");
    rows.push([
      "peak RSS, worker draining (SQLite, --concurrency 4), MiB",
      v(before),
      v(after),
      `${fmt(mib(m.runtime))} (Bun runtime)`,
      "",
      "",
    ]);
  }
  if (!rows.length) return [];
  return [
    "### Summary",
    "",
    `| measure | ${before ?? "before"} | ${after} | floor | task-spooler | nq |`,
    "|---|---:|---:|---:|---:|---:|",
    ...rows.map((x) => `| ${x.join(" | ")} |`),
    "",
  ];
}

/** The markdown report and the targets table's rows ([target, wanted, reached, verdict]). */
export function renderReport(r: ReportInput): { text: string; targets: string[][] } {
  const md: string[] = [];
  const out = (line = "") => md.push(line);
  const targets: string[][] = [];
  const [after, before] = [r.labels[0]!, r.labels[1]];

  out("### Machine and run");
  out();
  out("| | |");
  out("|---|---|");
  for (const [k, v] of Object.entries(r.machine)) out(`| ${k} | ${v} |`);
  out();
  md.push(...summary(r));

  const t = r.throughput;
  if (t) {
    out(`### Throughput: ${t.jobs} trivial jobs (\`true\`)`);
    out();
    out(
      "Wall time from spawning the worker process(es) to the last exit (Bun start-up, registration and the final drain check included), median over rounds (best in brackets). " +
        "`vs floor`: ms per job over the same round's bare-spawn floor of the same parallelism (sequential for 1 in flight, 4 in flight otherwise), median over rounds. " +
        "`in-DB`: N / (last finished_at − first started_at). `CPU ms/job`: user+sys of the worker processes, their children's exec included (PostgreSQL: workers + the whole server). " +
        "`CPU busy`: jobs/s × CPU per job over the machine's cores: near 100 % the drain is CPU-bound. " +
        `task-spooler and nq get ${t.otherJobs} jobs (each keeps a process per queued job).`,
    );
    out();
    out(
      `| scenario | ${after} jobs/s | ${before ? `${before} jobs/s | after ÷ before | ` : ""}${after} vs floor | ${after} in-DB jobs/s | CPU ms/job ${after}${before ? ` / ${before}` : ""} | ${after} CPU busy |`,
    );
    out(`|---|---:|${before ? "---:|---:|" : ""}---:|---:|---:|---:|`);
    for (const s of t.scenarios) {
      const a = t.runs[after]?.[s.key];
      const b = before ? t.runs[before]?.[s.key] : undefined;
      const best = (runs?: typeof a) =>
        runs?.length ? ` (${fmt(perSec(t.jobs, min(runs.map((x) => x.wallMs))), 0)})` : "";
      const cpuOf = (runs?: typeof a) =>
        runs?.length
          ? median(runs.map((x) => x.cpuMs + (Number.isFinite(x.serverCpuMs) ? x.serverCpuMs : 0))) / t.jobs
          : NaN;
      const cpu = (runs?: typeof a) =>
        runs?.length
          ? s.engine === "postgres"
            ? `${fmt(median(runs.map((x) => x.cpuMs)) / t.jobs, 2)} + ${fmt(median(runs.map((x) => x.serverCpuMs)) / t.jobs, 2)}`
            : fmt(cpuOf(runs), 2)
          : "n/a";
      const ra = rateOf(a, t.jobs);
      const rb = rateOf(b, t.jobs);
      out(
        `| ${s.label} | ${fmt(ra, 0)}${best(a)} | ${before ? `${fmt(rb, 0)}${best(b)} | ${ratio(ra, rb)} | ` : ""}${fmt(median(t.vsFloor[after]?.[s.key] ?? []), 2)}× | ${a?.length ? fmt(perSec(t.jobs, median(a.map((x) => x.spanMs))), 0) : ""} | ${cpu(a)}${before ? ` / ${cpu(b)}` : ""} | ${fmt((ra * cpuOf(a)) / (10 * r.nproc), 0)} % |`,
      );
    }
    const dash = before ? " | | | " : " ";
    out(
      `| floor: bare \`Bun.spawn\`, sequential | ${fmt(perSec(t.jobs, median(t.floors.seq)), 0)}${dash}| 1.00× | | | |`,
    );
    out(
      `| floor: bare \`Bun.spawn\`, 4 in flight | ${fmt(perSec(t.jobs, median(t.floors.par4)), 0)}${dash}| 1.00× | | | |`,
    );
    for (const [name, ms] of Object.entries(t.others))
      out(
        `| ${name} | ${fmt(perSec(t.otherJobs, median(ms)), 0)}${dash}| ${fmt(median(t.otherVsFloor[name] ?? []), 2)}× | | | |`,
      );
    for (const [name, why] of Object.entries(t.failures)) out(`| ${name} | ${why} |${before ? " | |" : ""} | | | |`);
    out();
    const pgRows = t.scenarios.filter((s) => s.engine === "postgres");
    if (pgRows.length && t.runs[after]?.[pgRows[0]!.key]?.some((x) => x.pgActivity)) {
      // What the queue's PostgreSQL backends did during the drains (sampled every 20 ms, all rounds).
      const sum = (key: string) => {
        const acc: Record<string, number> = {};
        for (const run of t.runs[after]?.[key] ?? [])
          for (const [k, v] of Object.entries(run.pgActivity ?? {})) acc[k] = (acc[k] ?? 0) + v;
        return acc;
      };
      const all = pgRows.map((s) => [s, sum(s.key)] as const);
      const keys = [...new Set(all.flatMap(([, a]) => Object.keys(a)))]
        .sort((x, y) => all.reduce((n, [, a]) => n + (a[y] ?? 0), 0) - all.reduce((n, [, a]) => n + (a[x] ?? 0), 0))
        .slice(0, 8);
      out(
        `PostgreSQL backends of the queue during the drains (${after}; pg_stat_activity sampled every 20 ms; share of backend samples by state / wait event):`,
      );
      out();
      out(`| scenario | transactions per job | ${keys.join(" | ")} |`);
      out(`|---|---:|${keys.map(() => "---:").join("|")}|`);
      for (const [s, a] of all) {
        const total = Object.values(a).reduce((x, y) => x + y, 0) || 1;
        const xacts = median((t.runs[after]?.[s.key] ?? []).map((x) => x.pgTransactions ?? NaN)) / t.jobs;
        out(
          `| ${s.label} | ${fmt(xacts, 1)} | ${keys.map((k) => `${fmt((100 * (a[k] ?? 0)) / total, 0)} %`).join(" | ")} |`,
        );
      }
      out();
    }
    if (pgRows.length && t.runs[after]?.[pgRows[0]!.key]?.some((x) => x.pgStatements)) {
      // Statements per job (pg_stat_statements), median over rounds, the busiest first.
      const per = (key: string, query: string) =>
        median((t.runs[after]?.[key] ?? []).map((x) => x.pgStatements?.[query] ?? 0)) / t.jobs;
      const queries = [
        ...new Set(
          pgRows.flatMap((s) => (t.runs[after]?.[s.key] ?? []).flatMap((x) => Object.keys(x.pgStatements ?? {}))),
        ),
      ];
      const weight = (q: string) => pgRows.reduce((n, s) => n + per(s.key, q), 0);
      const top = queries
        .sort((a, b) => weight(b) - weight(a))
        .filter((q) => weight(q) >= 0.05)
        .slice(0, 12);
      out(
        `Statements per job on PostgreSQL (${after}; pg_stat_statements over each drain, median over rounds; the busiest 12):`,
      );
      out();
      out(`| statement | ${pgRows.map((s) => s.label.replace("PostgreSQL: ", "")).join(" | ")} |`);
      out(`|---|${pgRows.map(() => "---:").join("|")}|`);
      for (const q of top)
        out(
          `| \`${q.slice(0, 110).replace(/\|/g, "\\|")}${q.length > 110 ? "…" : ""}\` | ${pgRows.map((s) => fmt(per(s.key, q), 2)).join(" | ")} |`,
        );
      out(
        `| all statements | ${pgRows
          .map((s) =>
            fmt(
              queries.reduce((n, q) => n + per(s.key, q), 0),
              1,
            ),
          )
          .join(" | ")} |`,
      );
      out();
    }
    const rate = (label: string, key: string) => rateOf(t.runs[label]?.[key], t.jobs);
    const scale = (label: string, engine: string, w: number[]) =>
      w.map((n) => fmt(rate(label, `${engine}:w${n}c1`), 0)).join(" / ");
    const sqliteW = t.scenarios.filter((s) => s.engine === "sqlite" && s.concurrency === 1).map((s) => s.workers);
    const pgW = t.scenarios
      .filter((s) => s.engine === "postgres" && !s.durable && s.concurrency === 1)
      .map((s) => s.workers);
    for (const label of r.labels) {
      out(
        `Scaling, ${label}: SQLite ${sqliteW.join(" / ")} workers: ${scale(label, "sqlite", sqliteW)} jobs/s` +
          (pgW.length ? `; PostgreSQL ${pgW.join(" / ")} workers: ${scale(label, "postgres", pgW)} jobs/s.` : "."),
      );
      out();
    }
    const c4 = rate(after, "sqlite:w1c4");
    const floor4 = perSec(t.jobs, median(t.floors.par4));
    const c4db = perSec(t.jobs, median((t.runs[after]?.["sqlite:w1c4"] ?? []).map((x) => x.spanMs)));
    targets.push([
      "`work --drain --concurrency 4`, trivial jobs (SQLite)",
      "≥ 70 % of the 4-in-flight floor",
      `${fmt(c4, 0)} jobs/s wall (in-DB ${fmt(c4db, 0)}) = ${fmt((100 * c4) / floor4, 0)} % of ${fmt(floor4, 0)}`,
      c4 >= 0.7 * floor4 ? "met" : "missed",
    ]);
    const w1 = rate(after, "sqlite:w1c1");
    const w8 = rate(after, "sqlite:w8c1");
    const w16 = rate(after, "sqlite:w16c1");
    if (Number.isFinite(w8) && Number.isFinite(w1))
      targets.push([
        "8 workers ≥ 1 worker (SQLite)",
        "ratio ≥ 1",
        `${fmt(w8, 0)} vs ${fmt(w1, 0)} jobs/s (${ratio(w8, w1)})`,
        w8 >= w1 ? "met" : "missed",
      ]);
    if (Number.isFinite(w16) && Number.isFinite(w8))
      targets.push([
        "16 workers ≥ 0.9 × 8 workers (SQLite)",
        "ratio ≥ 0.9",
        `${fmt(w16, 0)} vs ${fmt(w8, 0)} jobs/s (${ratio(w16, w8)})`,
        w16 >= 0.9 * w8 ? "met" : "missed",
      ]);
    const p1 = rate(after, "postgres:w1c1");
    const p4 = rate(after, "postgres:w4c1");
    if (Number.isFinite(p4) && Number.isFinite(p1))
      targets.push([
        "PostgreSQL: throughput grows from 1 to 4 workers (issue 9)",
        "ratio > 1",
        `${fmt(p4, 0)} vs ${fmt(p1, 0)} jobs/s (${ratio(p4, p1)})`,
        p4 > p1 ? "met" : "missed",
      ]);
  }

  const b = r.backlog;
  if (b) {
    out(`### Drain rate from a large backlog (one \`work --concurrency ${b.concurrency}\`)`);
    out();
    out(
      `Jobs ${b.skip + 1}-${b.skip + b.measured} of the backlog, rate from their finished_at (start-up excluded); median over rounds.`,
    );
    out();
    out(`| backlog | ${r.labels.map((l) => `${l} jobs/s`).join(" | ")} |`);
    out(`|---:|${r.labels.map(() => "---:").join("|")}|`);
    for (const size of b.sizes)
      out(
        `| ${size.toLocaleString("en")} | ${r.labels.map((l) => fmt(median(b.rates[l]?.[size] ?? []), 0)).join(" | ")} |`,
      );
    out();
    const pg = b.pgRates;
    if (pg) {
      out(`The same on PostgreSQL (the fast throwaway server; each round drains a clone of the filled database):`);
      out();
      out(`| backlog | ${r.labels.map((l) => `${l} jobs/s`).join(" | ")} |`);
      out(`|---:|${r.labels.map(() => "---:").join("|")}|`);
      for (const size of b.sizes)
        out(
          `| ${size.toLocaleString("en")} | ${r.labels.map((l) => fmt(median(pg[l]?.[size] ?? []), 0)).join(" | ")} |`,
        );
      out();
    }
    const [small, big] = [Math.min(...b.sizes), Math.max(...b.sizes)];
    const rs = median(b.rates[after]?.[small] ?? []);
    const rb = median(b.rates[after]?.[big] ?? []);
    targets.push([
      `draining from ${big.toLocaleString("en")} vs ${small.toLocaleString("en")} queued`,
      "≥ 0.7×",
      `${fmt(rb, 0)} vs ${fmt(rs, 0)} jobs/s (${ratio(rb, rs)})`,
      rb >= 0.7 * rs ? "met" : "missed",
    ]);
    if (b.pgRates) {
      const ps = median(b.pgRates[after]?.[small] ?? []);
      const pb = median(b.pgRates[after]?.[big] ?? []);
      targets.push([
        `PostgreSQL: draining from ${big.toLocaleString("en")} vs ${small.toLocaleString("en")} queued (issue 23)`,
        "≥ 0.95×",
        `${fmt(pb, 0)} vs ${fmt(ps, 0)} jobs/s (${ratio(pb, ps)})`,
        pb >= 0.95 * ps ? "met" : "missed",
      ]);
    }
  }

  const l = r.latency;
  if (l) {
    const sc = median(l.stampCost);
    out(`### Pick-up latency of an idle worker`);
    out();
    out(
      "The probe job is `sh -c 'date +%s%N > FILE'`; `from add exit` is its stamp minus the moment the benchmark saw `add` exit; `from commit` the stamp minus the job's created_at; `net` subtracts the probe's own start-up " +
        `(spawned bare from Bun: median ${fmt(sc)} ms). Workers run with \`--poll-interval 5\`, so a missed wake-up shows as a sample near 5000 ms. Samples alternate between the queues.`,
    );
    out();
    out(
      "| queue | from add exit median / p90 ms | net of probe | from commit median ms | from add spawn median ms | add wall median ms |",
    );
    out("|---|---:|---:|---:|---:|---:|");
    for (const [name, s] of Object.entries(l.samples)) {
      const fe = s.map((x) => x.fromExit);
      const fc = (s as SpoolLatency[]).map((x) => x.fromCommit).filter((x) => x !== undefined);
      out(
        `| ${name} | ${fmt(median(fe))} / ${fmt(percentile(fe, 90))} | ${fmt(median(fe) - sc)} | ${fc.length ? fmt(median(fc)) : "n/a"} | ${fmt(median(s.map((x) => x.fromSpawn)))} | ${fmt(median(s.map((x) => x.addMs)))} |`,
      );
    }
    out();
    const mine = l.samples[`${after} SQLite`];
    if (mine) {
      const fe = median(mine.map((x) => x.fromExit));
      targets.push([
        "pick-up median from `add`'s exit (SQLite)",
        "≤ 8 ms",
        `${fmt(fe)} ms (${fmt(fe - sc)} ms net of the probe)`,
        fe <= 8 ? "met" : "missed",
      ]);
    }
    const pg = l.samples[`${after} PostgreSQL`];
    if (pg)
      targets.push([
        "pick-up through NOTIFY (PostgreSQL)",
        "(issue 9: milliseconds)",
        `${fmt(median(pg.map((x) => x.fromExit)))} ms median from add's exit`,
        "",
      ]);
  }

  const c = r.cli;
  if (c) {
    const labels = c.variants.map((v) => v.label);
    const table = (title: string, rows: TimedCommand[], floorRow?: TimedCommand) => {
      if (!rows.length) return;
      const floorMs = floorRow ? median(floorRow.ms.bun ?? []) : NaN;
      out(title);
      out();
      out(`| command | ${labels.join(" | ")}${floorRow ? ` | ${labels[0]} − \`bun -e 0\`` : ""} |`);
      out(`|---|${labels.map(() => "---:").join("|")}|${floorRow ? "---:|" : ""}`);
      if (floorRow)
        out(
          `| ${floorRow.name} | ${fmt(floorMs)} / ${fmt(min(floorRow.ms.bun ?? []))} (cpu ${fmt(median(floorRow.cpu.bun ?? []))}) |${labels
            .slice(1)
            .map(() => " |")
            .join("")}${floorRow ? " |" : ""}`,
        );
      for (const row of rows) {
        const cells = labels.map((v) =>
          row.ms[v]?.length
            ? `${fmt(median(row.ms[v]!))} / ${fmt(min(row.ms[v]!))} (cpu ${fmt(median(row.cpu[v]!))})`
            : "",
        );
        out(
          `| ${row.name} | ${cells.join(" | ")}${floorRow ? ` | ${fmt(median(row.ms[labels[0]!] ?? []) - floorMs)} |` : " |"}`,
        );
      }
      out();
    };
    const [floorRow, ...small] = c.small;
    out("### CLI wall time (whole process, spawn to exit)");
    out();
    out(
      `Median / minimum ms over interleaved samples (user+sys CPU ms, median, in brackets). Variants: ${c.variants.map((v) => `${v.label} = \`${v.entry.replace(/^.*\/(wt|work)\//, "")}\` at ${v.commit}`).join("; ")}.`,
    );
    out();
    table("Small queue (100 jobs):", small, floorRow);
    for (const [name, ms] of Object.entries(c.others)) out(`- ${name}: median ${fmt(median(ms))} ms`);
    if (Object.keys(c.others).length) out();
    for (const [name, bld] of Object.entries(c.builds))
      out(
        `- Large queue, ${name}: ${bld.jobs.toLocaleString("en")} jobs (${Object.entries(bld.mix)
          .map(([k, v]) => `${k} ${v.toLocaleString("en")}`)
          .join(", ")}), ${fmt(mib(bld.bytes), 0)} MiB, built in ${fmt(bld.seconds)} s.`,
      );
    if (Object.keys(c.builds).length) out();
    table("Large queue, SQLite (page cache warm):", c.large);
    table(
      "Large queue, PostgreSQL (local server, this checkout only: an older checkout refuses the newer schema):",
      c.largePg,
    );
    if (c.inProcess.length) {
      const pg = c.inProcessPg ?? [];
      out(`In-process (${labels[1] ?? labels[0]}'s \`main(argv)\` called warm on the large queues):`);
      out();
      out(
        `| read | SQLite median ms | SQLite min ms |${pg.length ? " PostgreSQL median ms | PostgreSQL min ms |" : ""}`,
      );
      out(`|---|---:|---:|${pg.length ? "---:|---:|" : ""}`);
      for (const x of c.inProcess) {
        const p = pg.find((y) => y.name === x.name);
        out(
          `| ${x.name} | ${fmt(median(x.ms))} | ${fmt(min(x.ms))} |${pg.length ? ` ${p ? fmt(median(p.ms)) : ""} | ${p ? fmt(min(p.ms)) : ""} |` : ""}`,
        );
      }
      out();
    }
    const floorMs = floorRow ? median(floorRow.ms.bun ?? []) : NaN;
    const add = small.find((x) => x.name.startsWith("add"));
    const floorMin = floorRow ? min(floorRow.ms.bun ?? []) : NaN;
    /** Median verdict, with the minima (the least-disturbed samples) beside it on a loaded machine. */
    const verdict = (medDelta: number, minDelta: number, limit: number) =>
      medDelta <= limit ? "met" : minDelta <= limit ? "missed at the median, met at the minimum" : "missed";
    for (const v of labels.filter((x) => x.startsWith(after))) {
      const a = median(add?.ms[v] ?? []);
      const m = min(add?.ms[v] ?? []);
      if (Number.isFinite(a))
        targets.push([
          `\`add\` whole process, ${v}`,
          "≤ `bun -e 0` + 15 ms",
          `median ${fmt(a)} ms vs ${fmt(floorMs)} ms (+${fmt(a - floorMs)}); minimum ${fmt(m)} vs ${fmt(floorMin)} (+${fmt(m - floorMin)})`,
          verdict(a - floorMs, m - floorMin, 15),
        ]);
    }
    const slow = c.inProcess.filter((x) => median(x.ms) >= 60);
    if (c.inProcess.length)
      targets.push([
        "status / list / list --state dead / show on the large SQLite queue, in-process",
        "each < 60 ms",
        c.inProcess.map((x) => `${x.name} ${fmt(median(x.ms))}`).join(", "),
        slow.length ? "missed" : "met",
      ]);
    if (c.inProcessPg?.length) {
      const slowPg = c.inProcessPg.filter((x) => median(x.ms) >= 60);
      targets.push([
        "the same on the large PostgreSQL queue, in-process",
        "each < 60 ms",
        c.inProcessPg.map((x) => `${x.name} ${fmt(median(x.ms))}`).join(", "),
        slowPg.length ? "missed" : "met",
      ]);
    }
    const version = small.find((x) => x.name === "--version");
    if (c.large.length && version) {
      const v0 = labels[0]!;
      const base = median(version.ms[v0] ?? []);
      const reads = c.large.filter((x) => !x.name.startsWith("add"));
      const worst = Math.max(...reads.map((x) => median(x.ms[v0] ?? [])));
      const worstMin = Math.max(...reads.map((x) => min(x.ms[v0] ?? [])));
      const baseMin = min(version.ms[v0] ?? []);
      targets.push([
        `status / list on the large SQLite queue, whole process (${v0})`,
        "within 15 ms of start-up (`--version`)",
        `worst median ${fmt(worst)} ms vs --version ${fmt(base)} ms (+${fmt(worst - base)}); worst minimum ${fmt(worstMin)} vs ${fmt(baseMin)} (+${fmt(worstMin - baseMin)})`,
        verdict(worst - base, worstMin - baseMin, 15),
      ]);
    }
  }

  const m = r.rss;
  if (m) {
    out("### Peak RSS (VmHWM)");
    out();
    out(`| process | ${r.labels.map((x) => `${x} MiB`).join(" | ")} |`);
    out(`|---|${r.labels.map(() => "---:").join("|")}|`);
    for (const [name, byLabel] of Object.entries(m.cases))
      out(`| ${name} | ${r.labels.map((x) => fmt(mib(median(byLabel[x] ?? [])))).join(" | ")} |`);
    out(
      `| \`bun -e 'await Bun.sleep(500)'\` (the runtime) | ${fmt(mib(m.runtime))} |${r.labels
        .slice(1)
        .map(() => " |")
        .join("")}`,
    );
    out();
  }

  for (const p of r.profiles) {
    out(renderProfile(p));
    out();
  }
  const prof4 = r.profiles.find((p) => p.concurrency === 4);
  if (prof4)
    targets.push([
      "worker CPU per trivial job (in-process, --concurrency 4)",
      "≤ 2.5 ms",
      `${fmt(prof4.cpuMs / prof4.jobs, 2)} ms`,
      prof4.cpuMs / prof4.jobs <= 2.5 ? "met" : "missed",
    ]);

  if (targets.length) {
    out("### Targets (issue 13; issue 9's PostgreSQL scaling)");
    out();
    out("| target | wanted | reached | |");
    out("|---|---|---|---|");
    for (const x of targets) out(`| ${x.join(" | ")} |`);
    out();
  }
  return { text: `${md.join("\n")}\n`, targets };
}
