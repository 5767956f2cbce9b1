/**
 * `status` (docs/architecture.md "Job states"): the queue's full disks; the
 * shape of its data (counts per state, scheduled, per-lane counts, recent dead
 * jobs) is its JSON Schema (src/describe/schemas-core.ts), the read itself is
 * `statusSnapshot` (src/store/verbs/status.ts).
 */

import type { FullDisk, StatusData } from "../describe/schemas-core.ts";
import type { StateCounts } from "../describe/schemas-rows.ts";
import { queueDisks } from "../store/space.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { StateCounts, StatusData };

/** The queue's full disks on this host (see {@link StatusData.full_disks}). */
export function fullDisks(store: {
  driver: "sqlite" | "postgres";
  location: string;
  spoolDir: string;
  exists: boolean;
}): FullDisk[] {
  if (!store.exists) return [];
  return queueDisks(store)
    .filter((d) => d.full)
    .map((d) => ({ role: d.role, path: d.path, free_bytes: d.freeBytes }));
}
