/**
 * `output`'s display cap (README "Output"): a stream over 1 MiB shows its
 * last MiB and a hint that is a working command (with the queue selection),
 * which writes every byte; `--raw` without one stream says which to add.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

/** A hint as printed (`spoolctl output --db X 1 --raw --stream stdout`) → its argv after `spoolctl`, split by a real shell. */
function argvOf(command: string): string[] {
  const out = Bun.spawnSync(["sh", "-c", `for w in ${command}; do printf '%s\\0' "$w"; done`]).stdout.toString();
  const words = out.split("\0").slice(0, -1);
  expect(words[0]).toBe("spoolctl");
  return words.slice(1);
}

test("a 3 MB stdout shows its last MiB and a hint that writes all 3 MB", async () => {
  const size = 3_000_000;
  const id = await addJob(
    q,
    "--max-retries",
    "0",
    "--",
    "sh",
    "-c",
    `head -c ${size} /dev/zero | tr '\\0' a; echo done-err >&2`,
  );
  await drain(q);
  const r = await q.run(["output", String(id), "--db", q.db]);
  expect(r.code).toBe(0);
  const hint =
    /\[… (\d+) earlier bytes not shown \(the last 1 MiB at most, from a line's start\); all of them: (spoolctl [^\]]+)\]/.exec(
      r.stdout,
    );
  expect(hint).not.toBeNull();
  expect(Number(hint![1])).toBe(size - 1024 * 1024);
  expect(hint![2]).toBe(`spoolctl output --db ${q.dbWord} ${id} --raw --stream stdout`);
  const all = await q.run(argvOf(hint![2]!), { env: { SPOOLCTL_DB: "/nonexistent/elsewhere.db" } });
  expect(all.code).toBe(0);
  expect(all.stdout.length).toBe(size);

  // With --attempt the hint keeps it.
  const first = await q.run(["output", String(id), "--attempt", "1", "--stream", "stdout"]);
  expect(first.stdout).toContain(
    `all of them: spoolctl output --db ${q.dbWord} ${id} --attempt 1 --raw --stream stdout]`,
  );
});

test("--raw without --stream names the working command", async () => {
  const id = await addJob(q, "--", "echo", "hi");
  await drain(q);
  const r = await q.run(["output", String(id), "--raw"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("INVALID_INPUT");
  const hint = `spoolctl output --db ${q.dbWord} ${id} --raw --stream stdout`;
  expect(r.stderr).toContain(`${hint}  (or --stream stderr)`);
  expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  const again = await q.run(argvOf(hint));
  expect(again.code).toBe(0);
  expect(again.stdout).toBe("hi\n");
});
