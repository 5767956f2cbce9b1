/**
 * fast-check settings for the property tests (test/properties/): a fixed seed, so a run is
 * repeatable and a failure replays, and a bounded number of runs, so each file stays fast.
 * fast-check prints the seed, the path and the shrunk counterexample of a failure; replay it
 * with `SPOOLCTL_PROPERTY_SEED=<seed>` (and `fc.assert`'s `path`), or explore new cases with
 * `SPOOLCTL_PROPERTY_SEED=random`.
 */
import type { Parameters } from "fast-check";

/** The seed of every property run: SPOOLCTL_PROPERTY_SEED (an integer, or `random`), default fixed. */
function seed(): number {
  const raw = process.env.SPOOLCTL_PROPERTY_SEED;
  if (raw === "random") return (Math.random() * 2 ** 31) | 0;
  if (raw !== undefined && /^-?\d+$/.test(raw)) return Number(raw);
  return 34_05; // issue 34, item 5
}

/** `fc.assert` parameters: the seed above and `numRuns` cases (default 200). */
export function runs<T>(numRuns = 200): Parameters<T> {
  return { seed: seed(), numRuns };
}
