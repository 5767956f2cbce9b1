/**
 * Secrets never echo (docs/contract.md "Error objects and warnings"): a
 * refused `--env`, `--tag`, `add --from` line or `enqueue` spec names the
 * variable, never its value, in human and JSON output alike; and a job never
 * inherits the password of a PostgreSQL `SPOOLCTL_DB`.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jobEnvironment, workerEnvironment } from "../src/worker/executor.ts";
import { PG_ENABLED } from "./store/drivers.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";

const TOKEN = "ghp_s3cr3tT0kenValue1234567890abcdef";

const q = useTempQueue();

/** Runs `args` in human and JSON mode; returns everything printed, asserting a refusal each time. */
async function refusalText(args: string[], stdin?: string): Promise<string> {
  const human = await q.run(args, { stdin });
  const json = await q.run([args[0]!, "--json", ...args.slice(1)], { stdin }); // before any "--"
  expect(human.code).not.toBe(0);
  expect(json.code).toBe(human.code);
  expect(JSON.parse(json.stdout).ok).toBe(false);
  return [human.stdout, human.stderr, json.stdout, json.stderr].join("\n");
}

describe("a refused value is never printed", () => {
  const cases: { name: string; args: string[]; stdin?: string; names?: string }[] = [
    {
      name: "--env with a dash in the name",
      args: ["add", "--env", `API-TOKEN=${TOKEN}`, "--", "true"],
      names: "API-TOKEN",
    },
    { name: "--env without '=' (all of it may be the secret)", args: ["add", "--env", TOKEN, "--", "true"] },
    { name: "--env with an empty name", args: ["add", "--env", `=${TOKEN}`, "--", "true"] },
    {
      name: "the second --env of two",
      args: ["add", "--env", "A=1", "--env", `9X=${TOKEN}`, "--", "true"],
      names: "9X",
    },
    { name: "--tag with a bad key", args: ["add", "--tag", `bad key=${TOKEN}`, "--", "true"], names: "bad key" },
    { name: "list --tag without '='", args: ["list", "--tag", TOKEN] },
    {
      name: "an add --from line with a bad env name",
      args: ["add", "--from", "-"],
      stdin: `{"argv":["true"],"env":{"API-TOKEN":"${TOKEN}"}}\n`,
      names: "API-TOKEN",
    },
    {
      name: "an add --from line with a bad env value type",
      args: ["add", "--from", "-"],
      stdin: `{"argv":["true"],"env":{"T":["${TOKEN}"]}}\n`,
      names: "env.T",
    },
    {
      name: "an add --from line that is not JSON",
      args: ["add", "--from", "-"],
      stdin: `{"argv":["true"],"env":{"T":${TOKEN}}}\n`,
    },
    {
      name: "an enqueue spec that is not JSON",
      args: ["enqueue", `{"id":"j1","command":"true","env":{"T":${TOKEN}}}`],
    },
    {
      name: "an assignment before -- (a forgotten --env)",
      args: ["add", `API_TOKEN=${TOKEN}`, "--", "true"],
      names: "--env API_TOKEN=…",
    },
    {
      name: "an assignment as the command without --",
      args: ["add", `API_TOKEN=${TOKEN}`, "true"],
      names: "API_TOKEN=…",
    },
    {
      name: "an assignment given to a verb without arguments",
      args: ["status", `API_TOKEN=${TOKEN}`],
      names: "API_TOKEN=…",
    },
    {
      name: "an enqueue spec with a bad env name",
      args: ["enqueue", JSON.stringify({ id: "j1", command: "true", env: { "API-TOKEN": TOKEN } })],
      names: "API-TOKEN",
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const text = await refusalText(c.args, c.stdin);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(TOKEN.slice(4, 20)); // no part of it either
      if (c.names) expect(text).toContain(c.names);
    });
  }

  test("detail names the flag and the variable, never a value", async () => {
    const r = await q.run(["add", "--json", "--env", `API-TOKEN=${TOKEN}`, "--", "true"]);
    expect(JSON.parse(r.stdout).errors[0].detail).toEqual({
      flag: "--env",
      name: "API-TOKEN",
      accepted: expect.any(String),
    });
  });
});

describe("a job never inherits a database password", () => {
  test("SPOOLCTL_DB's password is dropped from a job's environment; the job's own variables and other URLs stay", () => {
    const env = jobEnvironment(
      workerEnvironment({
        SPOOLCTL_DB: `postgres://ci:${TOKEN}@db.example:5432/jobs?sslmode=require&password=${TOKEN}`,
        PATH: "/bin",
      }),
      { MINE: "1" },
      "SPOOLCTL_ATTEMPT_TOKEN=q-1-1",
    );
    expect(env.SPOOLCTL_DB).toBe("postgres://ci@db.example:5432/jobs?sslmode=require");
    expect(JSON.stringify(env)).not.toContain(TOKEN);
    expect([env.PATH, env.MINE, env.SPOOLCTL_ATTEMPT_TOKEN]).toEqual(["/bin", "1", "q-1-1"]);
    expect(jobEnvironment(workerEnvironment({ SPOOLCTL_DB: "/tmp/q.db" }), {}).SPOOLCTL_DB).toBe("/tmp/q.db");
  });

  test.skipIf(!PG_ENABLED)(
    "a job of a worker whose SPOOLCTL_DB holds a password sees it without, and its own spoolctl still reaches the queue",
    async () => {
      const { pgDatabaseForTest } = await import("./support/pg-server.ts");
      const url = new URL(await pgDatabaseForTest(import.meta.file));
      url.password = TOKEN; // the test server trusts loopback logins: the password is only there to leak
      const withPassword = url.toString();
      const env = { SPOOLCTL_DB: withPassword, XDG_STATE_HOME: join(q.dir, "state") };
      const script = join(q.dir, "job.sh");
      writeFileSync(script, `echo "db=$SPOOLCTL_DB"\nbun ${CLI} status --json >/dev/null && echo reached\n`);
      expect((await q.run(["add", "--json", "--", "sh", script], { env })).code).toBe(0);
      const work = await q.run(["work", "--drain"], { env });
      expect(work.code).toBe(0);
      const out = await q.run(["output", "1", "--stream", "stdout", "--raw"], { env });
      expect(out.stdout).not.toContain(TOKEN);
      expect(out.stdout).toContain(`db=${withPassword.replace(`:${TOKEN}`, "")}`);
      expect(out.stdout).toContain("reached");
      expect(work.stdout + work.stderr).not.toContain(TOKEN);
    },
  );
});
