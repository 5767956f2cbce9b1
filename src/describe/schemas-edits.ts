/**
 * The data of the verbs that change a job before it starts: hold, release,
 * edit, priority (docs/architecture.md "Holding a job", "Editing a job"); each
 * written once as a JSON Schema with its TypeScript type derived from it.
 */
import { arrayOf, bool, enumOf, int, type JsonSchema, object, optional, type Static } from "../contract/schema-kit.ts";
import { EDITABLE_FIELDS } from "../model/job.ts";
import { jobSummary } from "./schemas-rows.ts";

/** One job `hold` or `release` acted on. */
const heldJob = object({
  job_id: int,
  /** Whether the job is held now. */
  held: bool,
  /** False when it already was in that state (no ledger row written). */
  changed: bool,
});
/** One job `hold` or `release` acted on (see {@link heldJob}). */
export type HeldJob = Static<typeof heldJob>;

/** `hold --json` / `release --json` data: every job named or matched, and how many changed. */
const holdData = object({
  /** Jobs whose flag changed. */
  count: int,
  jobs: arrayOf(heldJob),
  /** Set by `--dry-run`: what would change; nothing changed. */
  dry_run: optional(bool),
});
/** `hold --json` / `release --json` data (see {@link holdData}). */
export type HoldData = Static<typeof holdData>;

/** `edit --json` / `priority --json` data: the job as written and the fields that changed (empty: it already was so). */
const editData = object({
  job: jobSummary,
  changed: arrayOf(enumOf(EDITABLE_FIELDS)),
});
/** `edit --json` / `priority --json` data (see {@link editData}). */
export type EditData = Static<typeof editData>;

/** Data schemas of hold, release, edit and priority, by verb name. */
export const EDIT_DATA_SCHEMAS: Record<string, JsonSchema> = {
  hold: holdData,
  release: holdData,
  edit: editData,
  priority: editData,
};
