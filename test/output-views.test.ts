/**
 * Output views that do not mangle (docs/architecture.md "Output"): a long
 * output's default view starts at a line's start, never mid-character; its
 * "N earlier bytes not shown" counts the file's bytes; output that is not text
 * says "binary, N bytes: use --raw" (`output`, `feedback`, their JSON). On a
 * shared queue the same holds for the copy the worker shipped into the
 * database (read when this host has no file: the test removes it).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, statSync } from "node:fs";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

const q = useTempQueue();

/** Lines of multi-byte text, `count` of them, each "ligne N: été … ✓" (2- and 3-byte characters). */
const TEXT_JOB = (count: number) =>
  `i=0; while [ $i -lt ${count} ]; do printf 'ligne %d: été à Zürich — ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓ ✓\\n' $i; i=$((i+1)); done`;

/** `work --drain`, on a shared queue with an output_cap that ships every byte of these outputs. */
async function run(): Promise<void> {
  if (q.driver === "postgres") await q.setConfig("output_cap", String(8 * 1024 * 1024));
  await drain(q);
}

/** The views read by the CLI, first from the file, then (shared queue only) from the shipped copy. */
async function bothSources(id: number, stream: "stdout" | "stderr", check: () => Promise<void>): Promise<void> {
  await check();
  if (q.driver !== "postgres") return;
  const attempt = (await q.attempt(id))!;
  rmSync(stream === "stdout" ? attempt.stdout_path : attempt.stderr_path);
  await check();
}

test("a long multi-byte output starts at a line's start, with no U+FFFD, and counts the file's bytes", async () => {
  const id = await addJob(q, "-c", TEXT_JOB(20_000)); // about 1.6 MB
  await run();
  const attempt = (await q.attempt(id))!;
  const file = readFileSync(attempt.stdout_path);
  expect(file.length).toBeGreaterThan(1024 * 1024);
  await bothSources(id, "stdout", async () => {
    const r = await q.run(["output", String(id), "--stream", "stdout"]);
    expect(r.code).toBe(0);
    const [header, hint, first, ...rest] = r.stdout.split("\n");
    expect(header).toBe(`=== job ${id} attempt 1 stdout ===`);
    const n = Number(/^\[… (\d+) earlier bytes not shown/.exec(hint!)?.[1]);
    expect(r.stdout).not.toContain("\uFFFD");
    expect(first).toMatch(/^ligne \d+: été à Zürich/);
    // The count is the file's own: what follows it is exactly the file from byte n.
    expect(Buffer.from([first, ...rest].join("\n")).equals(file.subarray(n))).toBe(true);
    expect(file[n - 1]).toBe(0x0a);
    expect(file.length - n).toBeLessThanOrEqual(1024 * 1024);

    const json = await q.json(["output", String(id), "--stream", "stdout"]);
    const view = json.env.data.attempts[0].stdout;
    expect(view).toMatchObject({ truncated: true, omitted_bytes: n, partial_first_line: false, binary: false });
    expect(view.text.startsWith("ligne ")).toBe(true);

    // feedback's tail too, with a --tail-bytes that cuts a character in two.
    const fb = await q.json(["feedback", String(id), "--tail-bytes", "1001"]);
    const tail = fb.env.data.streams.stdout;
    expect(tail.tail).not.toContain("\uFFFD");
    expect(tail.tail.startsWith("ligne ")).toBe(true);
    expect(Buffer.from(tail.tail).equals(file.subarray(tail.omitted_bytes))).toBe(true);
  });
});

test("one long line without a break is cut at a character's start, marked as partial", async () => {
  // 1.2 MB of "é" (2 bytes each), no newline: the window's first byte may continue a character.
  const id = await addJob(q, "-c", "head -c 600001 /dev/zero | tr '\\0' x | sed 's/x/é/g'");
  await run();
  await bothSources(id, "stdout", async () => {
    const json = await q.json(["output", String(id), "--stream", "stdout"]);
    const view = json.env.data.attempts[0].stdout;
    expect(view.partial_first_line).toBe(true);
    expect(view.text).not.toContain("\uFFFD");
    expect(view.omitted_bytes + Buffer.byteLength(view.text)).toBe(view.size_bytes);
  });
});

test("binary output says binary, N bytes: use --raw, on output and feedback; --raw has every byte", async () => {
  const size = 2_000_000;
  const id = await addJob(q, "-c", `head -c ${size} /dev/urandom`);
  await run();
  const attempt = (await q.attempt(id))!;
  expect(statSync(attempt.stdout_path).size).toBe(size);
  const raw = await q.run(["output", String(id), "--raw", "--stream", "stdout"]);
  expect(raw.stdout.length).toBeGreaterThan(0);
  await bothSources(id, "stdout", async () => {
    const r = await q.run(["output", String(id), "--stream", "stdout"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `=== job ${id} attempt 1 stdout ===\n[binary, ${size} bytes: use spoolctl output --db ${q.dbWord} ${id} --raw --stream stdout]\n`,
    );
    const json = await q.json(["output", String(id)]);
    expect(json.env.data.attempts[0].stdout).toMatchObject({ binary: true, text: "", size_bytes: size });
    const fb = await q.run(["feedback", String(id)]);
    expect(fb.stdout).toContain(
      `--- stdout (binary, ${size} bytes: use spoolctl output --db ${q.dbWord} ${id} --raw --stream stdout) ---`,
    );
    expect((await q.json(["feedback", String(id)])).env.data.streams.stdout.binary).toBe(true);
  });
});

test("a short text output and a text with a stray Latin-1 byte stay text", async () => {
  const id = await addJob(q, "-c", "printf 'caf\\351 ok\\nline two\\n'");
  await run();
  const r = await q.run(["output", String(id), "--stream", "stdout"]);
  expect(r.stdout).toBe(`=== job ${id} attempt 1 stdout ===\ncaf\uFFFD ok\nline two\n`);
});
