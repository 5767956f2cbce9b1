/**
 * A job's program is looked up once per worker, not once per attempt
 * (docs/architecture.md "Execution"): the worker's spawns probe no PATH folder
 * for a program it found already, the program still sees the name it was
 * given as argv[0], and a program moved away meanwhile is found where it went.
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

function script(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

const hasStrace = Bun.which("strace") !== null;

test.skipIf(!hasStrace)(
  "a worker probes PATH for a program once, not once per job",
  async () => {
    const empty = join(q.dir, "empty");
    mkdirSync(empty);
    // Three folders without `true` ahead of the system's: a lookup probes each.
    const path = `${empty}:${empty}2:${empty}3:${process.env.PATH}`;
    for (let i = 0; i < 10; i++) await q.addJob("--", "true");
    const trace = join(q.dir, "trace");
    const proc = Bun.spawn(
      ["strace", "-f", "-qq", "-e", "trace=stat,newfstatat,statx,access,faccessat2", "-o", trace, "bun", ...cliArgs()],
      { env: q.env({ PATH: path }), cwd: q.dir, stdout: "pipe", stderr: "pipe" },
    );
    expect(await proc.exited).toBe(0);
    const probes = readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => l.includes(`"${empty}/true"`));
    // One lookup (at most a couple of probes of the folder), not one per job (10 before).
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.length).toBeLessThanOrEqual(2);
    for (let id = 1; id <= 10; id++) expect((await q.job(id))!.state).toBe("done");
  },
  60_000,
);

function cliArgs(): string[] {
  return [join(import.meta.dir, "../src/cli.ts"), "work", "--drain"];
}

test("the program sees its own name as argv[0], and one moved away is found where it went", async () => {
  const first = join(q.dir, "bin1");
  const second = join(q.dir, "bin2");
  mkdirSync(first);
  mkdirSync(second);
  script(join(first, "mytool"), "echo one");
  const env = { PATH: `${first}:${second}:${process.env.PATH}` };
  await q.addJob("--", "mytool");
  await q.addJob("--", "bash", "-c", 'tr "\\0" " " < /proc/$$/cmdline');
  // Moved between two jobs of one worker, well within the time a found path is kept.
  await q.addJob(
    "--",
    "sh",
    "-c",
    `rm ${first}/mytool; printf '#!/bin/sh\\necho two\\n' > ${second}/mytool; chmod +x ${second}/mytool`,
  );
  await q.addJob("--", "mytool");
  expect((await q.run(["work", "--drain"], { env })).code).toBe(0);
  expect(readFileSync(join(q.spool, "output", "1.1.stdout"), "utf8")).toBe("one\n");
  expect(readFileSync(join(q.spool, "output", "2.1.stdout"), "utf8")).toStartWith("bash -c ");
  expect((await q.job(4))!.state).toBe("done");
  expect((await q.job(4))!.last_attempt_no).toBe(1);
  expect(readFileSync(join(q.spool, "output", "4.1.stdout"), "utf8")).toBe("two\n");
  rmSync(second, { recursive: true });
}, 60_000);
