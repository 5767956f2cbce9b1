/**
 * One scrape's server time on a large queue: `metricsSnapshot` (the read) and
 * `renderExposition`, in process, median of 11 after a warm-up.
 *
 *   bun bench/metrics.ts PATH_OR_URL     # a queue built by bench/build-1m.ts (or build-1m-pg.ts)
 */

import { healthContext, judgeRecord } from "../src/commands/workers.ts";
import { TOOL_VERSION } from "../src/contract/version.ts";
import { renderExposition } from "../src/ops/metrics.ts";
import { openQueue } from "../src/store/index.ts";
import { resolveLocation } from "../src/store/location.ts";
import { metricsSnapshot } from "../src/store/verbs/metrics.ts";

const where = process.argv[2];
if (!where) throw new Error("usage: bun bench/metrics.ts PATH_OR_URL");
const store = await openQueue(resolveLocation(where), { create: false, readOnly: true });
const times: number[] = [];
let bytes = 0;
for (let i = 0; i < 12; i++) {
  const t0 = performance.now();
  const snap = await metricsSnapshot(store, judgeRecord, healthContext(store), TOOL_VERSION, store.driver);
  bytes = renderExposition(snap).length;
  if (i > 0) times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(
  JSON.stringify({ driver: store.driver, median_ms: times[5], min_ms: times[0], max_ms: times.at(-1), bytes }),
);
await store.close();
