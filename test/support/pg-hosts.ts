/**
 * Shared pieces of the tests where `unshare` hosts share one PostgreSQL queue
 * (test/multihost.test.ts, test/stopped-worker-pg.test.ts): a host's
 * environment, the CLI run from the test process, and looking for a process
 * on a host.
 */
import { join } from "node:path";
import type { Host } from "./hosts.ts";
import { CLI } from "./temp-queue.ts";

/**
 * The environment of a process on host `name`: the test's timing `knobs`, the
 * queue at `url`, and a spool folder of its own under `dir` (output files stay
 * on their host).
 */
export function hostEnv(knobs: Record<string, string>, url: string, dir: string, name: string): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    ...knobs,
    SPOOLCTL_DB: url,
    XDG_STATE_HOME: join(dir, `state-${name}`),
    NO_COLOR: "1",
  };
}

/** Runs `spoolctl VERB --json ARGS…` from the test process with `env`; resolves with the parsed envelope. */
export async function cliJson(env: Record<string, string>, ...args: string[]): Promise<any> {
  const [verb, ...rest] = args;
  const proc = Bun.spawn(["bun", CLI, verb!, "--json", ...rest], { env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  try {
    return JSON.parse(out);
  } catch {
    throw new Error(`spoolctl ${args.join(" ")}: exit ${code}\n${out}\n${err}`);
  }
}

/** PIDs (as this namespace numbers them) of the processes on `host` whose command line contains `needle`. */
export async function pidsOn(host: Host, needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of host.processes()) {
    try {
      if ((await Bun.file(`/proc/${pid}/cmdline`).text()).replaceAll("\0", " ").includes(needle)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether a process whose command line contains `needle` runs on `host`. */
export async function runsOn(host: Host, needle: string): Promise<boolean> {
  return (await pidsOn(host, needle)).length > 0;
}
