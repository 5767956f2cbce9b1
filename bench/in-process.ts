/**
 * The in-process time of the read verbs: imports a checkout's src/cli.ts and
 * calls its `main(argv)` repeatedly (after one warm-up call each), so the
 * figures leave out Bun start-up and module loading. The verbs print to
 * stdout (the caller drops it); the timings go to OUT as JSON.
 *
 *   bun bench/in-process.ts CLI DB N OUT [SHOW_ID]
 */
import { writeFileSync } from "node:fs";

const [cli, db, n, out, showId] = process.argv.slice(2);
if (!cli || !db || !out) {
  console.error("usage: bun bench/in-process.ts CLI DB N OUT");
  process.exit(2);
}
const { main } = (await import(cli)) as { main: (argv: string[]) => Promise<number> };
const cases: [string, string[]][] = [
  ["status", ["status", "--db", db]],
  ["status --json", ["status", "--db", db, "--json"]],
  ["list (50 newest)", ["list", "--db", db]],
  ["list --state dead", ["list", "--db", db, "--state", "dead"]],
  ["show (one job)", ["show", "--db", db, showId ?? "1"]],
];
const results: { name: string; ms: number[] }[] = [];
for (const [name, args] of cases) {
  if ((await main(args)) !== 0) throw new Error(`${name}: non-zero exit`);
  const ms: number[] = [];
  for (let i = 0; i < Number(n ?? 10); i++) {
    const t0 = performance.now();
    const code = await main(args);
    ms.push(performance.now() - t0);
    if (code !== 0) throw new Error(`${name}: exit ${code}`);
  }
  results.push({ name, ms });
}
writeFileSync(out, JSON.stringify(results));
