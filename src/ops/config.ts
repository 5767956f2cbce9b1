/**
 * `config` (docs/architecture.md "Location", "Settings"): the queue-wide settings stored in the
 * database: `max_retries` and `timeout` are copied into a job when it is added;
 * `backoff_base` and `backoff_cap` are read when a retry is scheduled.
 */

import { SpoolError } from "../contract/errors.ts";
import { closest } from "../contract/flags.ts";
import type { ConfigValidation, SettingView } from "../describe/schemas-operator.ts";
import { DEFAULTS, LIMITS } from "../model/limits.ts";
import { SETTING_KEYS } from "../model/settings.ts";
import { parseDuration, parseInteger, parseNumber, parseTimeout } from "./values.ts";

/** A canonical setting key. */
export type SettingKey = (typeof SETTING_KEYS)[number];

/** When a setting takes effect. */
export type AppliesAt = SettingView["applies_at"];

/** What each setting means, its bounds and its parser. */
export const SETTINGS: Record<
  SettingKey,
  {
    default: number;
    unit: string;
    applies_at: AppliesAt;
    min: number;
    max: number;
    description: string;
    parse(raw: string): number;
  }
> = {
  max_retries: {
    default: DEFAULTS.max_retries,
    unit: "count",
    applies_at: "add",
    ...LIMITS.max_retries,
    description: "default --max-retries of new jobs; copied into a job when it is added",
    parse: (raw) => parseInteger("max_retries", raw, LIMITS.max_retries.min, LIMITS.max_retries.max),
  },
  timeout: {
    default: DEFAULTS.timeout_seconds,
    unit: "seconds",
    applies_at: "add",
    ...LIMITS.timeout_seconds,
    description:
      "default --timeout of new jobs (a duration: 90, 5m, 2h; none: no time limit, stored as 0); copied into a job when it is added",
    parse: (raw) => parseTimeout("timeout", raw),
  },
  backoff_base: {
    default: DEFAULTS.backoff_base,
    unit: "number",
    applies_at: "retry",
    ...LIMITS.backoff_base,
    description: "retry backoff is min(backoff_cap, backoff_base ^ failures) seconds; read when a retry is scheduled",
    parse: (raw) => parseNumber("backoff_base", raw, LIMITS.backoff_base.min, LIMITS.backoff_base.max),
  },
  backoff_cap: {
    default: DEFAULTS.backoff_cap,
    unit: "seconds",
    applies_at: "retry",
    ...LIMITS.backoff_cap,
    description: "longest retry backoff (a duration); read when a retry is scheduled",
    parse: (raw) => parseDuration("backoff_cap", raw, LIMITS.backoff_cap.min, LIMITS.backoff_cap.max),
  },
  output_cap: {
    default: DEFAULTS.output_cap,
    unit: "bytes",
    applies_at: "run",
    ...LIMITS.output_cap,
    description:
      "bytes of each stream of an attempt that a worker ships into a shared (PostgreSQL) database for readers on other hosts; beyond it the stream ends with a truncation marker; read when a worker starts",
    parse: (raw) => parseInteger("output_cap", raw, LIMITS.output_cap.min, LIMITS.output_cap.max),
  },
  retry_spawn_failures: {
    default: DEFAULTS.retry_spawn_failures,
    unit: "switch",
    applies_at: "retry",
    ...LIMITS.retry_spawn_failures,
    description:
      "1: a command that cannot start (program not found, not executable, E2BIG) is retried by budget like any failure, for a program that may appear (installed by another job, present on other hosts); 0: dead at once; read when an attempt ends",
    parse: (raw) => parseSwitch("retry_spawn_failures", raw),
  },
  kill_leftovers: {
    default: DEFAULTS.kill_leftovers,
    unit: "switch",
    applies_at: "run",
    ...LIMITS.kill_leftovers,
    description:
      "1: a worker ends (SIGTERM, grace, SIGKILL) the processes a job leaves running once its own process exits, as add --kill-leftovers does for one job; 0: they are left alone and reported (a left_running event); read when a worker starts",
    parse: (raw) => parseSwitch("kill_leftovers", raw),
  },
};

/** A switch as typed: on/true/yes or 1, off/false/no or 0; raises `INVALID_INPUT` naming `key`. */
function parseSwitch(key: string, raw: string): number {
  const word = raw.trim().toLowerCase();
  if (["on", "true", "yes"].includes(word)) return 1;
  if (["off", "false", "no"].includes(word)) return 0;
  return parseInteger(key, raw, 0, 1);
}

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { ConfigValidation, SettingView };

/** Canonical key from user spelling (`max-retries`, `MAX_RETRIES`). Raises `INVALID_INPUT` with a suggestion. */
export function settingKey(raw: string): SettingKey {
  const key = raw.trim().toLowerCase().replaceAll("-", "_");
  if ((SETTING_KEYS as readonly string[]).includes(key)) return key as SettingKey;
  const guess = closest(key, [...SETTING_KEYS]);
  throw new SpoolError(
    "INVALID_INPUT",
    `unknown setting ${JSON.stringify(raw)}${guess ? ` (did you mean ${guess}?)` : ""}`,
    {
      remediation: `use one of ${SETTING_KEYS.join(", ")} (dashes or underscores)`,
      did_you_mean: guess,
      detail: { key: raw, accepted: SETTING_KEYS },
    },
  );
}

/** A setting's view from its stored raw JSON text (null: unset); a value that is not a finite number reads as unset. */
export function settingView(key: SettingKey, raw: string | null): SettingView {
  const meta = SETTINGS[key];
  const parsed = raw === null ? null : (JSON.parse(raw) as unknown);
  const stored = typeof parsed === "number" && Number.isFinite(parsed) ? parsed : null;
  return {
    key,
    value: stored ?? meta.default,
    default: meta.default,
    source: stored === null ? "default" : "database",
    unit: meta.unit,
    applies_at: meta.applies_at,
    description: meta.description,
  };
}

/** `config set`'s key and value as typed, parsed and checked: raises `INVALID_INPUT` naming the key or the bound. */
export function parseSetting(rawKey: string, rawValue: string): { key: SettingKey; value: number } {
  const key = settingKey(rawKey);
  return { key, value: SETTINGS[key].parse(rawValue) };
}
