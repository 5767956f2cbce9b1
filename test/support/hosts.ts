/**
 * Several "hosts" on one machine, for multi-host tests: each host is a PID and
 * UTS namespace (`unshare --pid --fork --mount-proc --uts`) with its own host
 * name and its own PID numbers, which collide with the other hosts'. Its
 * PID 1 is a `sleep` that keeps the namespace alive, so a process run on the
 * host (through `nsenter`) can die and leave its children behind, as a worker
 * SIGKILLed on a real machine does. Stopping the host kills everything in it.
 *
 * Needs root (namespaces) and util-linux's unshare and nsenter; `hostsUsable()`
 * says whether this machine has them.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { Subprocess } from "bun";

/** Whether this machine can make hosts (root, unshare, nsenter, /proc). */
export function hostsUsable(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  const probe = Bun.spawnSync(["unshare", "--pid", "--fork", "--mount-proc", "--uts", "true"], {
    stdout: "ignore",
    stderr: "ignore",
  });
  return probe.exitCode === 0 && Bun.which("nsenter") !== null;
}

/** The PIDs (in our namespace) of the children of `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Polls `check` every 10 ms until it returns a value, for at most `ms`. */
async function poll<T>(what: string, check: () => T | null | undefined, ms = 10000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = check();
    if (value !== null && value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** A process started on a host. */
export interface HostProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Its PID as seen from the test (outside the namespace): for signals. */
  outerPid: number;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** Everything it wrote on stdout so far. */
  stdout(): string;
}

/** One host: a PID + UTS namespace whose PID 1 keeps it alive. */
export class Host {
  private constructor(
    readonly name: string,
    private readonly unshare: Subprocess,
    /** PID (outside) of the namespace's PID 1. */
    readonly initPid: number,
  ) {}

  /** The nsenter processes of {@link spawn}, outside the namespace: killed by {@link stop}. */
  private readonly entered: Subprocess[] = [];

  /** Starts a host named `name`. */
  static async start(name: string): Promise<Host> {
    const unshare = Bun.spawn(
      ["unshare", "--pid", "--fork", "--mount-proc", "--uts", "sh", "-c", `hostname ${name} && exec sleep 1000000`],
      {
        stdin: "ignore",
        stdout: "ignore",
        stderr: "inherit",
      },
    );
    try {
      const initPid = await poll(`host ${name} to start`, () => {
        const child = childrenOf(unshare.pid)[0];
        if (child === undefined) return null;
        // The namespace is ready once PID 1 has exec'd sleep (the host name is set by then).
        const cmd = readFileSync(`/proc/${child}/cmdline`, "utf8");
        return cmd.startsWith("sleep") ? child : null;
      });
      return new Host(name, unshare, initPid);
    } catch (error) {
      // A host that never came up is not handed out, so nobody would stop it: kill it here.
      for (const pid of childrenOf(unshare.pid)) signal(pid, "SIGKILL");
      unshare.kill("SIGKILL");
      await unshare.exited;
      throw error;
    }
  }

  /** Runs `argv` on this host (entering its PID, UTS and mount namespaces) with `env`. */
  async spawn(argv: string[], env: Record<string, string>, cwd?: string): Promise<HostProcess> {
    const proc = Bun.spawn(["nsenter", "-t", String(this.initPid), "-p", "-u", "-m", "--", ...argv], {
      env,
      cwd,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    this.entered.push(proc);
    let out = "";
    let err = "";
    void (async () => {
      for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
    })();
    void (async () => {
      for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
    })();
    // nsenter forks the command into the namespace: the child is the process we want to signal.
    const outerPid = await poll(
      `the process nsenter started on ${this.name}`,
      () => childrenOf(proc.pid)[0] ?? (proc.exitCode !== null ? -1 : null),
    );
    return { proc, outerPid, stderr: () => err, stdout: () => out };
  }

  /** Runs `argv` on this host to completion. */
  async run(argv: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
    const proc = Bun.spawn(["nsenter", "-t", String(this.initPid), "-p", "-u", "-m", "--", ...argv], {
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { code, stdout, stderr };
  }

  /** PIDs (outside) of every live process in this host's PID namespace but its PID 1. */
  processes(): number[] {
    let ns: string;
    try {
      ns = readlinkSync(`/proc/${this.initPid}/ns/pid`);
    } catch {
      return [];
    }
    const found: number[] = [];
    for (const name of readdirSync("/proc")) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === this.initPid) continue;
      try {
        if (readlinkSync(`/proc/${pid}/ns/pid`) !== ns) continue;
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
        if (state !== "Z" && state !== "X") found.push(pid);
      } catch {
        // gone meanwhile
      }
    }
    return found;
  }

  /**
   * Kills the host and everything in it, whatever state the test left it in:
   * every process of the namespace and every nsenter of {@link spawn} gets
   * SIGCONT (a SIGSTOPped one) then SIGKILL. Never throws, so a caller's
   * finally/afterEach tears down every host even after a failed assertion.
   */
  async stop(): Promise<void> {
    // Everything in the namespace first (a process entered with nsenter has its parent outside it).
    // nsenter stops itself when its child is SIGSTOPped and is not woken by the child's SIGCONT:
    // left alone, it would stay stopped for good beside its zombie child.
    const outside = this.entered
      .splice(0)
      .filter((proc) => proc.exitCode === null && proc.signalCode === null)
      .map((proc) => proc.pid);
    const inside = this.processes();
    for (const pid of [...inside, ...outside]) signal(pid, "SIGCONT");
    for (const pid of [...inside, this.initPid, ...outside]) signal(pid, "SIGKILL"); // PID 1 gone: the kernel kills the whole namespace
    this.unshare.kill("SIGKILL");
    await this.unshare.exited;
    // Best effort: a killed process lingers as a zombie until its parent outside reaps it.
    await poll(`host ${this.name} to be gone`, () => (this.processes().length === 0 ? true : null)).catch(() => {});
  }
}

/** Sends `sig` to `pid`; a process already gone is no error. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}
