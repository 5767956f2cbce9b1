/**
 * The hidden watchdog entry of the CLI (docs/architecture.md "A stopped
 * worker"): only `work`'s own call starts a watchdog; anything else typed with
 * its name is an unknown command, with an envelope under --json. A watchdog
 * whose input is closed (its worker gone) exits at once.
 */
import { expect, test } from "bun:test";
import { isWatchdogCall, WATCHDOG_ARG } from "../src/worker/watchdog.ts";
import { CLI } from "./support/temp-queue.ts";

const CONFIG = JSON.stringify({
  workerPid: 1,
  workerId: "w",
  guardMs: 60_000,
  graceMs: 100,
  recheckMs: 1000,
  ledger: "/nonexistent/ledger",
  renewedNs: String(process.hrtime.bigint()),
  say: false,
});

test("only a worker's own call is a watchdog call", () => {
  expect(isWatchdogCall([WATCHDOG_ARG, CONFIG])).toBe(true);
  expect(isWatchdogCall([WATCHDOG_ARG])).toBe(false);
  expect(isWatchdogCall([WATCHDOG_ARG, "--json"])).toBe(false);
  expect(isWatchdogCall([WATCHDOG_ARG, '{"workerPid":"1","renewedNs":"5"}'])).toBe(false);
  expect(isWatchdogCall([WATCHDOG_ARG, CONFIG, "extra"])).toBe(false);
  expect(isWatchdogCall(["status", CONFIG])).toBe(false);
});

test("typed by hand, the watchdog's name is an unknown command with an envelope", () => {
  const r = Bun.spawnSync(["bun", CLI, WATCHDOG_ARG, "--json"], { stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode).toBe(1);
  const env = JSON.parse(r.stdout.toString());
  expect(env.errors[0].code).toBe("UNKNOWN_COMMAND");
});

test("a watchdog whose input is closed (its worker gone) exits at once, 0", () => {
  const r = Bun.spawnSync(["bun", CLI, WATCHDOG_ARG, CONFIG], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  expect([r.exitCode, r.stderr.toString()]).toEqual([0, ""]);
});
