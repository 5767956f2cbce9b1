/**
 * Bun's client reports a LISTEN it cannot renew after a reconnect with a raw
 * console.warn naming the internal channel; the PostgreSQL driver says it its
 * own way instead, at most every 30 s (src/store/postgres/listen.ts).
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

test("a failed re-LISTEN is one spoolctl line per 30 s, without the channel; other warnings pass through", () => {
  const listen = resolve(import.meta.dir, "../src/store/postgres/listen.ts");
  const script = `await import(${JSON.stringify(listen)});
    console.warn('bun:sql LISTEN "spoolctl_abc_work" failed, retrying: Connection closed');
    console.warn('bun:sql LISTEN "spoolctl_abc_work" failed, retrying: Connection refused');
    console.warn("something else", 42);`;
  const run = Bun.spawnSync(["bun", "-e", script], { stderr: "pipe", stdout: "pipe" });
  const lines = run.stderr.toString().trim().split("\n");
  expect(lines).toEqual([
    "spoolctl: no instant wake-ups while the database connection is down (Connection closed); polling until it is back",
    "something else 42",
  ]);
});
