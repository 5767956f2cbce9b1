/**
 * What triage does, done by a script (issue 12; docs/architecture.md
 * "Triage"): `list --state dead --group` and the filters `--queue`, `--tag`,
 * `--since`, `--failure-reason`, `--match` of `list` and `retry --all`, and
 * `retry --all --dry-run`, all through `--json`. Every envelope is validated
 * against the schemas `spoolctl schema --json` exports; the queue is read
 * through the driver.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Contract, loadContract } from "./support/contract.ts";
import { addJob, drain } from "./support/jobs.ts";
import { patchJobs } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

const q = useTempQueue({ scope: "file" });
let contract: Contract;
const ids = { hosts: [] as number[], timeouts: [] as number[], config: [] as number[], canceled: 0, old: 0 };

/** Runs `args --json`, checks the envelope and (on success) the verb's data against the exported schemas. */
async function json(args: string[], verb = args[0]!): Promise<any> {
  const r = await q.json(args);
  const where = `spoolctl ${args.join(" ")} --json → ${JSON.stringify(r.env).slice(0, 600)}`;
  expect([where, contract.envelope(r.env)]).toEqual([where, []]);
  if (r.env.ok) expect([where, contract.data(verb, r.env.data)]).toEqual([where, []]);
  return r.env;
}

const sortedIds = (xs: number[]) => [...xs].sort((a, b) => a - b);
const jobIdsOf = (env: any): number[] => sortedIds(env.data.jobs.map((j: any) => j.job_id ?? j.id));

beforeAll(async () => {
  contract = await loadContract(q);
  for (const n of [3, 17, 99])
    ids.hosts.push(
      await addJob(
        q,
        "--max-retries",
        "0",
        "--queue",
        "net",
        "--tag",
        "team=a",
        "--",
        "sh",
        "-c",
        `echo "could not connect to host ${n}" >&2; exit 3`,
      ),
    );
  for (const n of [1, 2])
    ids.timeouts.push(
      await addJob(q, "--max-retries", "0", "--timeout", "1", "--tag", "team=b", "--", "sleep", `${30 + n}`),
    );
  for (const n of [1, 2])
    ids.config.push(
      await addJob(
        q,
        "--max-retries",
        "0",
        "--",
        "sh",
        "-c",
        `echo "open /etc/cfg-${n}.json: no such file" >&2; exit 2`,
      ),
    );
  ids.old = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo ancient >&2; exit 5");
  ids.canceled = await addJob(q, "--after", "1h", "--", "true");
  expect((await q.json(["cancel", String(ids.canceled)])).code).toBe(0);
  await drain(q, "--queue", "net");
  await drain(q);
  // Stands for a job that died two days ago (no verb moves time).
  await patchJobs(q, [ids.old], { finished_at: (await q.job(ids.old))!.finished_at! - 2 * 86400 });
});

test("list --state dead --group --json: the groups, largest first, with their job ids, signature and example", async () => {
  const env = await json(["list", "--state", "dead", "--group"]);
  const { data } = env;
  expect([data.count, data.job_count]).toEqual([4, 8]);
  expect(data.groups.map((g: any) => g.count)).toEqual([3, 2, 2, 1]);
  expect(data.groups.map((g: any) => g.text).sort()).toEqual([
    "process_exit · exit 2 · open <path>: no such file",
    "process_exit · exit 3 · could not connect to host <n>",
    "process_exit · exit 5 · ancient",
    "timeout · signal 15 · (no stderr)",
  ]);
  const hosts = data.groups[0];
  expect(sortedIds(hosts.job_ids)).toEqual(ids.hosts);
  expect(hosts.lanes).toEqual(["net"]);
  expect(hosts.signature).toEqual({
    state: "dead",
    failure_reason: "process_exit",
    exit_code: 3,
    signal: null,
    stderr: "could not connect to host <n>",
  });
  expect(hosts.example.job_id).toBe(Math.max(...ids.hosts));
  expect(hosts.example.stderr_line).toBe("could not connect to host 99");
  expect(hosts.first_seen).toBeLessThanOrEqual(hosts.last_seen);
  // The worker recorded each attempt's line and its signature (masked once, at the end of the attempt).
  const shown = await json(["show", String(ids.hosts[0])]);
  expect(shown.data.attempts[0]).toMatchObject({
    stderr_last_line: "could not connect to host 3",
    stderr_signature: "1|could not connect to host <n>",
  });
  const byText = new Map(data.groups.map((g: any) => [g.text, sortedIds(g.job_ids)]));
  expect(byText.get("timeout · signal 15 · (no stderr)")).toEqual(ids.timeouts);
  expect(byText.get("process_exit · exit 2 · open <path>: no such file")).toEqual(ids.config);
  // Without --state: canceled ones too, after the dead ones.
  const all = await json(["list", "--group"]);
  expect(all.data.groups.at(-1)).toMatchObject({
    count: 1,
    job_ids: [ids.canceled],
    signature: { state: "canceled", failure_reason: "canceled" },
  });
});

test("list --group filters: --failure-reason, --queue, --tag, --since, --match; a non-failed --state is refused", async () => {
  const groups = async (...args: string[]) =>
    (await json(["list", "--state", "dead", "--group", ...args])).data.groups.map((g: any) => sortedIds(g.job_ids));
  expect(await groups("--failure-reason", "timeout")).toEqual([ids.timeouts]);
  expect(await groups("--queue", "net")).toEqual([ids.hosts]);
  expect(await groups("--tag", "team=b")).toEqual([ids.timeouts]);
  expect((await groups("--since", "1d")).flat().includes(ids.old)).toBe(false);
  expect((await groups("--since", "3d")).flat().includes(ids.old)).toBe(true);
  expect(await groups("--match", 'sh -c echo "open *')).toEqual([ids.config]);
  const bad = await json(["list", "--state", "queued", "--group"]);
  expect([bad.ok, bad.errors[0].code]).toEqual([false, "INVALID_INPUT"]);
  const badReason = await json(["list", "--failure-reason", "exploded"]);
  expect([badReason.ok, badReason.errors[0].code]).toEqual([false, "INVALID_INPUT"]);
});

test("list (no --group) takes the same filters", async () => {
  expect(
    jobIdsOf(await json(["list", "--state", "dead", "--failure-reason", "timeout,process_exit", "--tag", "team=b"])),
  ).toEqual(ids.timeouts);
  expect(jobIdsOf(await json(["list", "--match", "sleep 3?"]))).toEqual(ids.timeouts);
  expect(jobIdsOf(await json(["list", "--failure-reason", "canceled"]))).toEqual([ids.canceled]);
});

test("retry --all --dry-run says what it would requeue and changes nothing; then retry --all with the same filters does it", async () => {
  const before = JSON.stringify(await q.snapshot());
  const dry = await json(["retry", "--all", "--failure-reason", "timeout", "--since", "1h", "--dry-run"]);
  expect(dry.data.dry_run).toBe(true);
  expect([dry.data.count, jobIdsOf(dry)]).toEqual([2, ids.timeouts]);
  expect(JSON.stringify(await q.snapshot())).toBe(before);

  const none = await json(["retry", "--all", "--queue", "net", "--match", "sleep *", "--dry-run"]);
  expect(none.data).toEqual({ count: 0, jobs: [], dry_run: true });

  const done = await json(["retry", "--all", "--failure-reason", "timeout", "--since", "1h"]);
  expect(done.data.dry_run).toBeUndefined();
  expect(jobIdsOf(done)).toEqual(ids.timeouts);
  for (const id of ids.timeouts) expect((await q.job(id))!.state).toBe("queued");
  for (const id of [...ids.hosts, ...ids.config, ids.old]) expect((await q.job(id))!.state).toBe("dead");

  const byGlob = await json([
    "retry",
    "--all",
    "--state",
    "dead",
    "--match",
    'sh -c echo "could not*',
    "--tag",
    "team=a",
  ]);
  expect(jobIdsOf(byGlob)).toEqual(ids.hosts);
  for (const id of ids.config) expect((await q.job(id))!.state).toBe("dead");

  const noAll = await json(["retry", "--match", "x*"]);
  expect([noAll.ok, noAll.errors[0].code, noAll.errors[0].message]).toEqual([
    false,
    "INVALID_INPUT",
    "--match selects jobs only with --all",
  ]);
});
