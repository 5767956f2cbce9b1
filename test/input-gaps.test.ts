/**
 * Small input gaps (issue 19 item 12): `add --from` refuses an env (or tag)
 * name holding "=" (it used to store `{"X=Y": "1"}` as X="Y=1") and a JSON
 * string holding a lone surrogate escape (`\udcff`, no character: not valid
 * UTF-8 once stored), as it refuses a file that is not UTF-8; `list` and
 * `show` tell a real newline in a command from a literal backslash-n.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

async function addFrom(line: string) {
  return q.json(["add", "--from", "-"], { stdin: `${line}\n` });
}

test("--from: an env or tag name holding = is refused, naming the field and the name, never the value", async () => {
  for (const [line, field] of [
    ['{"argv": ["true"], "env": {"X=Y": "secret-value"}}', "env"],
    ['{"argv": ["true"], "tags": {"team=a": "b"}}', "tags"],
  ] as const) {
    const r = await addFrom(line);
    expect([line, r.code, r.env.errors[0]?.code]).toEqual([line, 1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toContain("line 1");
    expect(r.env.errors[0].message).toContain(field);
    expect(r.env.errors[0].message).toContain('"=');
    expect(JSON.stringify(r.env)).not.toContain("secret-value");
  }
  expect(await q.exists()).toBe(false);
});

test("--from: a lone surrogate escape is refused wherever it is, without echoing the string", async () => {
  for (const line of [
    String.raw`{"argv": ["echo", "a\udcffb"]}`,
    String.raw`{"command": "echo \ud800"}`,
    String.raw`{"argv": ["true"], "env": {"TOKEN": "s3cr3t\udcff"}}`,
    String.raw`{"argv": ["true"], "note": "x\udfff"}`,
  ]) {
    const r = await addFrom(line);
    expect([line, r.code, r.env.errors[0]?.code]).toEqual([line, 1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toMatch(/line 1: .*lone surrogate/);
    expect(JSON.stringify(r.env)).not.toContain("s3cr3t");
  }
  expect(await q.exists()).toBe(false);
  // A surrogate pair is one character (😀) and is kept.
  const ok = await addFrom(String.raw`{"argv": ["echo", "\ud83d\ude00"]}`);
  expect(ok.code).toBe(0);
  expect((await q.job(1))?.argv).toEqual(["echo", "😀"]);
});

test("list and show: a real newline in a command reads differently from a literal backslash-n", async () => {
  await q.addJob("--", "printf", "a\nb");
  await q.addJob("--", "printf", "a\\nb");
  const list = (await q.run(["list"])).stdout;
  expect(list).toContain("printf $'a\\nb'");
  expect(list).toContain("printf 'a\\nb'");
  const [real, literal] = [(await q.run(["show", "1"])).stdout, (await q.run(["show", "2"])).stdout];
  expect(real).toContain("printf $'a\\nb'");
  expect(literal).toContain("printf 'a\\nb'");
  expect(list.split("\n").filter((l) => l.includes("printf"))).toHaveLength(2); // one line each
});

test("enqueue: the same refusals for its JSON spec", async () => {
  for (const spec of [
    String.raw`{"id": "a1", "command": "echo \udcff"}`,
    '{"id": "a2", "command": "true", "env": {"X=Y": "secret-value"}}',
  ]) {
    const r = await q.json(["enqueue", spec]);
    expect([spec, r.code, r.env.errors[0]?.code]).toEqual([spec, 1, "INVALID_INPUT"]);
    expect(JSON.stringify(r.env)).not.toContain("secret-value");
  }
  expect(await q.exists()).toBe(false);
});
