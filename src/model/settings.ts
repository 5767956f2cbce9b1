/**
 * Queue-wide settings (docs/architecture.md "Settings"): stored in the database so every worker sees
 * them. `max_retries` and `timeout` are copied into a job when it is added;
 * `backoff_base` and `backoff_cap` are read when a retry is scheduled.
 */
import { DEFAULTS } from "./limits.ts";

/** The effective settings, with defaults filled in. `timeout` and `backoff_cap` are seconds. */
export interface QueueSettings {
  max_retries: number;
  timeout: number;
  backoff_base: number;
  backoff_cap: number;
  /** Bytes of each stream of an attempt a worker ships to a shared database. */
  output_cap: number;
  /** 1: retry a command that cannot start by budget; 0 (default): dead at once. */
  retry_spawn_failures: number;
  /** 1: workers end what a job leaves running after its leader exits; 0 (default): reported only. */
  kill_leftovers: number;
}

/** Setting keys, canonical (underscore) spelling. */
export const SETTING_KEYS = [
  "max_retries",
  "timeout",
  "backoff_base",
  "backoff_cap",
  "output_cap",
  "retry_spawn_failures",
  "kill_leftovers",
] as const;

/**
 * The effective settings from the stored ones (raw JSON text by key, as
 * `listSettings` answers): a key unset, or set to anything but a finite
 * number, takes its default (docs/architecture.md "Settings").
 */
export function settingsFrom(set: Record<string, string>): QueueSettings {
  const num = (key: string, fallback: number): number => {
    const raw = set[key];
    if (raw === undefined) return fallback;
    const value = JSON.parse(raw);
    return typeof value === "number" && Number.isFinite(value) ? value : fallback;
  };
  return {
    max_retries: num("max_retries", DEFAULTS.max_retries),
    timeout: num("timeout", DEFAULTS.timeout_seconds),
    backoff_base: num("backoff_base", DEFAULTS.backoff_base),
    backoff_cap: num("backoff_cap", DEFAULTS.backoff_cap),
    output_cap: num("output_cap", DEFAULTS.output_cap),
    retry_spawn_failures: num("retry_spawn_failures", DEFAULTS.retry_spawn_failures),
    kill_leftovers: num("kill_leftovers", DEFAULTS.kill_leftovers),
  };
}
