/**
 * Which schedule or hook made a job, read from its idempotency key (docs/architecture.md
 * "Recurring jobs", "Hooks"): what `list`, `show` and triage say beside the command.
 */
import { batchOfHookKey } from "../store/batch-hooks.ts";
import { HOOK_KEY_PREFIX, slotOfKey } from "../store/recurring.ts";

/**
 * `schedule NAME slot 2026-12-02T03:00:00Z` (or `… run-now at …`), `hook NAME for job 12 (dead)`,
 * `hook NAME for batch B`, or null for a job no schedule or hook made.
 */
export function originText(key: string | null): string | null {
  const slot = slotOfKey(key);
  if (slot) return `schedule ${slot.schedule} ${slot.manual ? "run-now at" : "slot"} ${slot.slot}`;
  const batch = batchOfHookKey(key);
  if (batch) return `hook ${batch.hook} for batch ${batch.batch}`;
  if (key?.startsWith(HOOK_KEY_PREFIX)) {
    const [name, job, , state] = key.slice(HOOK_KEY_PREFIX.length).split(":");
    return `hook ${name} for job ${job} (${state})`;
  }
  return null;
}

/** The short form for a table cell: `[sched NAME]` or `[hook NAME]`, or "". */
export function originTag(key: string | null): string {
  const slot = slotOfKey(key);
  if (slot) return `[sched ${slot.schedule}] `;
  if (key?.startsWith(HOOK_KEY_PREFIX)) return `[hook ${key.slice(HOOK_KEY_PREFIX.length).split(":")[0]}] `;
  return "";
}
