/**
 * JSON Schemas of the data of the operator and contract verbs (retry, rerun,
 * events, config-*, doctor, capabilities, schema, brief,
 * enqueue), and of the `events --follow` stream frames. Mirrors the result
 * types in `src/ops/`.
 */

import {
  any,
  arrayOf,
  bool,
  constant,
  enumOf,
  int,
  type JsonSchema,
  loose,
  mapOf,
  nullable,
  num,
  object,
  oneOf,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { SETTING_KEYS } from "../model/settings.ts";
import { addedJob, jobEvent } from "./schemas-rows.ts";

const SOURCES = ["flag", "environment", "project_config", "default"] as const;

const fromTo = object({ from: int, to: int });
/** One requeued job, as `retry --json` reports it; `changed` only when the retry changed settings (`--timeout`, `--max-retries`, `--env`: env by key only, values stay out of the ledger). */
const retriedJob = object({
  job_id: int,
  state: constant("queued"),
  changed: optional(
    object({
      timeout_seconds: optional(fromTo),
      max_retries: optional(fromTo),
      env_set: optional(arrayOf(str)),
    }),
  ),
  /** Dependents its failure had closed, queued again with it (docs/architecture.md "Dependencies"); absent when none. */
  revived: optional(arrayOf(int)),
  /** With `--no-cascade`: the dependents its failure closed that stay closed, down the chain, ascending; absent when none. */
  left_closed: optional(arrayOf(int)),
});
/** One requeued job (see {@link retriedJob}). */
export type RetriedJob = Static<typeof retriedJob>;

/** `retry --json` data: one job, or `{count, jobs}` for several or `--all` (`dry_run` set by --dry-run: nothing was requeued). */
const retryData = oneOf(
  retriedJob,
  object({
    count: int,
    jobs: arrayOf(retriedJob),
    dry_run: optional(constant(true)),
    revived: optional(arrayOf(int)),
    /** With `--no-cascade` and `--all`: every dependent left closed, ascending; absent when none. */
    left_closed: optional(arrayOf(int)),
  }),
);
/** `retry --json` data (see {@link retryData}). */
export type RetryData = Static<typeof retryData>;
/** A setting as `config get|set|show` report it. */
const settingProps = {
  key: enumOf(SETTING_KEYS),
  value: num,
  default: num,
  /** `database` when set with `config set`, else `default`. */
  source: enumOf(["database", "default"]),
  unit: str,
  /** When the setting takes effect. */
  applies_at: enumOf(["add", "retry", "run"]),
  description: str,
};
/** A setting as `config get` reports it. */
const settingView = object(settingProps);
/** A setting (see {@link settingProps}). */
export type SettingView = Static<typeof settingView>;
/** `config set --json` data: the setting and its value before. */
const settingSet = object({ ...settingProps, previous: num });
/** `config set --json` data (see {@link settingSet}). */
export type SettingSet = Static<typeof settingSet>;
/** `config unset --json` data: the setting, and whether a stored value was removed. */
const settingUnset = object({ ...settingProps, removed: bool });
/** `config unset --json` data (see {@link settingUnset}). */
export type SettingUnset = Static<typeof settingUnset>;

/** `config show` data: where the queue is and why, and the settings (null when the path cannot be resolved). */
const configShowData = object({
  config_path: str,
  config_exists: bool,
  config_valid: bool,
  config_problem: nullable(str),
  ignored_keys: arrayOf(str),
  precedence: arrayOf(enumOf(SOURCES)),
  sources: object({ db_path: nullable(enumOf(SOURCES)) }),
  values: object({ db_path: nullable(str), spool_dir: nullable(str) }),
  settings: nullable(mapOf(settingView)),
});
/** `config show` data (see {@link configShowData}). */
export type ConfigShowData = Static<typeof configShowData>;

/** `config validate` data. */
const configValidation = object({
  config_path: str,
  exists: bool,
  valid: bool,
  problem: nullable(str),
  format: constant("json"),
  schema_version: constant(1),
  recognized_keys: arrayOf(str),
  unknown_keys: arrayOf(str),
});
/** `config validate` data (see {@link configValidation}). */
export type ConfigValidation = Static<typeof configValidation>;
/** One doctor check. `blocked_by` names the failed check that made this one skip. */
const doctorCheck = object({
  id: str,
  status: enumOf(["pass", "warn", "fail", "skip"]),
  message: str,
  remediation: nullable(str),
  blocked_by: nullable(str),
});
/** One doctor check (see {@link doctorCheck}). */
export type DoctorCheck = Static<typeof doctorCheck>;

/** `doctor --json` data. `ready` is false when any check failed. */
const doctorData = object({
  ready: bool,
  checks: arrayOf(doctorCheck),
  summary: object({ passed: int, warnings: int, failed: int, skipped: int }),
  config: object({
    config_exists: bool,
    config_path: nullable(str),
    config_valid: bool,
    db_path: nullable(str),
    db_source: nullable(enumOf(SOURCES)),
  }),
  versions: object({ contract_version: str, schema_version: int, tool_version: str, bun_version: str }),
});
/** `doctor --json` data (see {@link doctorData}). */
export type DoctorData = Static<typeof doctorData>;

/** One line of output as `output --follow --all --json` streams it (`text` without its newline). */
const followedLine = object({ job: int, attempt: int, stream: enumOf(["stdout", "stderr"]), text: str });
/** One followed line (see {@link followedLine}). */
export type FollowedLine = Static<typeof followedLine>;

/** `brief --json` data. `approx_tokens` is characters / 4, rounded up. */
const briefData = object({ text: str, approx_tokens: int, budget_tokens: int });
/** `brief --json` data (see {@link briefData}). */
export type BriefData = Static<typeof briefData>;

/** `enqueue --json` data: the job added, as `add` reports it, and the caller's id. */
const enqueueData = object({ ...addedJob.properties, id: str });
/** `enqueue --json` data (see {@link enqueueData}). */
export type EnqueueData = Static<typeof enqueueData>;

/** A control frame of `events --follow --json`. */
const controlFrame = object({
  control: object({
    type: enumOf(["end", "error"]),
    reason: enumOf(["max_events", "idle_timeout", "signal", "storage_error"]),
    events: optional(int),
    cursor: optional(int),
    code: optional(str),
    message: optional(str),
    exit_code: optional(int),
  }),
});

/** A control frame (see {@link controlFrame}). */
export type ControlFrame = Static<typeof controlFrame>;

/** Any frame of `events --follow --json`: a ledger row (a data frame) or the closing control frame. */
const eventsFollowFrame = oneOf(jobEvent, controlFrame);
/** A frame of `events --follow --json` (see {@link eventsFollowFrame}). */
export type EventsFollowFrame = Static<typeof eventsFollowFrame>;

/** `rerun --json` data: the job, queued again, the state it left and the number its next attempt will have. */
const rerunData = object({
  job_id: int,
  state: constant("queued"),
  from: enumOf(["done", "dead", "canceled"]),
  next_attempt_no: int,
  /** The jobs its failure had closed (need_failed), revived with it as `retry` revives them; absent when none. */
  revived: optional(arrayOf(int)),
});
/** `rerun --json` data (see {@link rerunData}). */
export type RerunData = Static<typeof rerunData>;

/** `events --json` data: one page of the ledger, oldest first (its cursor is in `meta.pagination`). */
const eventsData = object({ count: int, events: arrayOf(jobEvent) });
/** `events --json` data (see {@link eventsData}). */
export type EventsData = Static<typeof eventsData>;

/**
 * `capabilities --json` data: deliberately loose, the keys that must be
 * present and no property list (the document describes the tool and grows
 * with it; docs/contract.md "Stability").
 */
const capabilitiesData = loose([
  "tool_name",
  "tool_version",
  "contract_version",
  "verbs",
  "compound_commands",
  "global_flags",
  "exit_codes",
  "error_codes",
  "code_registry",
  "job_states",
  "attempt_states",
  "failure_reasons",
  "failure_groups",
  "events",
  "limits",
  "defaults",
  "settings",
  "env_vars",
  "config",
  "output_modes",
]);
/**
 * What the schema of `capabilities --json` data promises: its required keys,
 * their values unknown. The builder (src/describe/capabilities.ts) returns a
 * richer type of its own and `satisfies` this one.
 */
export type CapabilitiesData = Static<typeof capabilitiesData>;

/** `schema --json` data: the dialect, the envelope's schema, and the schemas of verbs' data and of stream frames by name. */
const schemaData = object({ dialect: str, envelope_schema: any, verbs: mapOf(any), streams: mapOf(any) });
/** `schema --json` data (see {@link schemaData}): the schemas themselves are typed as any JSON, as the schema says. */
export type SchemaData = Static<typeof schemaData>;

/** Schemas of raw stream frames, by stream name. */
export const STREAM_SCHEMAS: Record<string, JsonSchema> = {
  events_follow: eventsFollowFrame,
  events_follow_data: jobEvent,
  output_follow_all: followedLine,
};

/** Data schemas of the operator and contract verbs, by verb name. */
export const OPERATOR_DATA_SCHEMAS: Record<string, JsonSchema> = {
  retry: retryData,
  rerun: rerunData,
  events: eventsData,
  "config-show": configShowData,
  "config-validate": configValidation,
  "config-get": settingView,
  "config-set": settingSet,
  "config-unset": settingUnset,
  doctor: doctorData,
  capabilities: capabilitiesData,
  schema: schemaData,
  brief: briefData,
  enqueue: enqueueData,
};
