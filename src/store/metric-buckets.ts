/**
 * The bucket of a duration, as SQL both drivers' triggers share
 * (docs/architecture.md "Metrics").
 */
import { DURATION_BUCKETS } from "../model/metrics.ts";

/**
 * A SQL CASE giving the index in {@link DURATION_BUCKETS} of the first bound
 * ≥ `expr` (seconds), or the list's length (`+Inf`). Written into the schema's
 * triggers (schema v16), so a change of the bounds needs a migration step.
 */
export function bucketCase(expr: string): string {
  const arms = DURATION_BUCKETS.map((le, i) => `WHEN ${expr} <= ${le} THEN ${i}`).join(" ");
  return `CASE ${arms} ELSE ${DURATION_BUCKETS.length} END`;
}
