/**
 * `status` (docs/architecture.md "Job states"): the
 * shape of its data (counts per state, scheduled, per-lane counts, recent dead
 * jobs) is its JSON Schema (src/describe/schemas-core.ts), the read itself is
 * `statusSnapshot` (src/store/verbs/status.ts), its full disks `fullDisks`
 * (src/store/space.ts).
 */

import type { StatusData } from "../describe/schemas-core.ts";
import type { StateCounts } from "../describe/schemas-rows.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { StateCounts, StatusData };
