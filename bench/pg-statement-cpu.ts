/**
 * Bun.sql's own CPU per PostgreSQL statement (issue 35 item 1): N statements
 * on one reserved connection, awaited one at a time and then pipelined (all
 * issued before the first answer), for three shapes: `SELECT 1`, a
 * parameterised SELECT of 8 parameters, and one of 25 (the size of the
 * outcome call, hot-path.ts recordOutcome). Prints, per shape and mode, the
 * client's CPU (process.cpuUsage, user+sys) and the wall time per statement.
 *
 *   bun bench/pg-statement-cpu.ts URL [--n 5000]
 */
import { SQL } from "bun";

const url = process.argv[2];
if (!url) {
  console.error("usage: bun bench/pg-statement-cpu.ts URL [--n 5000]");
  process.exit(2);
}
const i = process.argv.indexOf("--n");
const N = i > 0 ? Number(process.argv[i + 1]) : 5000;
const sql = new SQL(url, { max: 1 });
const conn = await sql.reserve();

const params = (k: number) => Array.from({ length: k }, (_, j) => (j % 2 === 0 ? j : `v${j}`));
const text = (k: number) =>
  `SELECT ${Array.from({ length: k }, (_, j) => `$${j + 1}::${j % 2 === 0 ? "int" : "text"}`).join(", ")}`;
const shapes: { name: string; run: () => Promise<unknown> }[] = [
  { name: "SELECT 1 (no parameters)", run: () => conn`SELECT 1 AS one` },
  { name: "8 parameters", run: () => conn.unsafe(text(8), params(8)) },
  { name: "25 parameters", run: () => conn.unsafe(text(25), params(25)) },
];

console.log(`| statement | mode | client CPU µs/statement | wall µs/statement |`);
console.log(`|---|---|---:|---:|`);
for (const s of shapes) {
  for (let w = 0; w < 200; w++) await s.run(); // warm: prepared, JIT
  for (const mode of ["one at a time", "pipelined"] as const) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    if (mode === "one at a time") for (let k = 0; k < N; k++) await s.run();
    else await Promise.all(Array.from({ length: N }, () => s.run()));
    const wall = (performance.now() - t0) * 1000;
    const c = process.cpuUsage(c0);
    console.log(`| ${s.name} | ${mode} | ${((c.user + c.system) / N).toFixed(1)} | ${(wall / N).toFixed(1)} |`);
  }
}
conn.release();
await sql.close();
