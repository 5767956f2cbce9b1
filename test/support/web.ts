/**
 * A real `spoolctl ui` process for the web view's tests: started on a free
 * loopback port (`--port 0`), its URL read from the envelope it prints first.
 */
import type { Subprocess } from "bun";
import type { TempQueue } from "./temp-queue.ts";

/** A running `spoolctl ui`. */
export interface UiProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** The URL it printed, token included. */
  url: string;
  /** The envelope it printed first, as text. */
  firstLine: string;
  /** `http://127.0.0.1:PORT`. */
  base: string;
  token: string;
  port: number;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** `fetch(base + path)` with the bearer token (unless `headers.authorization` is given as ""). */
  get(path: string, init?: RequestInit): Promise<Response>;
  /** SIGINT, then the exit code. */
  stop(): Promise<number>;
}

/** Starts `spoolctl ui --port 0 --json ARGS…` on `q`'s queue and waits for its URL. */
export async function startUi(q: TempQueue, ...args: string[]): Promise<UiProcess> {
  const proc = q.spawn(["ui", "--port", "0", "--json", ...args]) as Subprocess<"ignore", "pipe", "pipe">;
  let err = "";
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = performance.now() + 30_000;
  while (!out.includes("\n")) {
    const read = await Promise.race([
      reader.read(),
      Bun.sleep(Math.max(0, deadline - performance.now())).then(() => null),
    ]);
    if (read === null || read.done) {
      proc.kill("SIGKILL");
      throw new Error(`spoolctl ui printed no URL (stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)})`);
    }
    out += new TextDecoder().decode(read.value);
  }
  reader.releaseLock();
  const envelope = JSON.parse(out.slice(0, out.indexOf("\n")));
  const url = envelope.data.url as string;
  const parsed = new URL(url);
  const token = parsed.searchParams.get("token")!;
  const base = `${parsed.protocol}//${parsed.host}`;
  return {
    proc,
    url,
    firstLine: out.slice(0, out.indexOf("\n")),
    base,
    token,
    port: Number(parsed.port),
    stderr: () => err,
    get(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      else if (headers.get("authorization") === "") headers.delete("authorization");
      return fetch(base + path, { redirect: "manual", ...init, headers });
    },
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGINT");
      return await proc.exited;
    },
  };
}
