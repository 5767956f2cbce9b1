/**
 * Bounds and defaults of job fields (docs/architecture.md "Adding a job"). The parser, `--help` and
 * `capabilities` all read them from here.
 */
import { CONFIG_FILE_MAX_BYTES } from "./location.ts";

/** Defaults of a new job (overridable queue-wide with `config set`, docs/architecture.md "Settings"). */
export const DEFAULTS = {
  timeout_seconds: 300,
  max_retries: 3,
  priority: 0,
  queue: "default",
  backoff_base: 2,
  backoff_cap: 60,
  /** Bytes of each stream of an attempt shipped to a shared database (1 MiB). */
  output_cap: 1024 * 1024,
  /** 1: a command that cannot start is retried by budget like any failure; 0: dead at once (docs/architecture.md "Execution"). */
  retry_spawn_failures: 0,
  /** 1: a worker ends what a job leaves running once its leader exits; 0: reported only (docs/architecture.md "Leftover processes"). */
  kill_leftovers: 0,
} as const;

/**
 * A job's `timeout_seconds` when it has no time limit (`--timeout none`,
 * `config set timeout none`; docs/architecture.md "Timeouts"): 0, which no
 * duration can be (the smallest is {@link LIMITS}.timeout_seconds.min), so the
 * schema's NOT NULL REAL column holds it unchanged and JSON shows
 * `"timeout_seconds": 0`.
 */
export const NO_TIMEOUT = 0;

/** Accepted ranges and shapes. */
export const LIMITS = {
  /** 32-bit signed priority. */
  priority: { min: -2147483648, max: 2147483647 },
  /** Timeout in seconds; up to 30 days. */
  timeout_seconds: { min: 0.001, max: 30 * 86400 },
  max_retries: { min: 0, max: 1000 },
  max_crashes: { min: 0, max: 1000 },
  queue: { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/, minLength: 1, maxLength: 64 },
  tags: { max: 16, keyMaxLength: 64, valueMaxLength: 256 },
  env: { max: 256 },
  note: { maxLength: 4096 },
  key: { maxLength: 256 },
  argv: { maxBytes: 256 * 1024 },
  backoff_base: { min: 1, max: 1000 },
  backoff_cap: { min: 0, max: 30 * 86400 },
  /** Shipped output per stream of an attempt, bytes (0: ship nothing). */
  output_cap: { min: 0, max: 256 * 1024 * 1024 },
  retry_spawn_failures: { min: 0, max: 1 },
  kill_leftovers: { min: 0, max: 1 },
  /** `--after` / `--at`: up to ten years ahead. */
  delay_seconds: { max: 10 * 365 * 86400 },
  slots: { min: 1, max: 100000 },
  concurrency: { min: 1, max: 1024 },
  poll_interval: { min: 0.01, max: 3600 },
  list_limit: { min: 1, max: 10000, default: 50 },
  /** A project config file (`config validate`, `.spoolctl/config.json`): read no further than this. */
  config_file: { maxBytes: CONFIG_FILE_MAX_BYTES },
  /** `add --from FILE|-`: the whole batch, file or stdin. */
  from_file: { maxBytes: 64 * 1024 * 1024 },
} as const;

/** Default of `SPOOLCTL_LOCK_WAIT`: how long `add` rides out a busy queue, seconds. */
export const LOCK_WAIT_DEFAULT_SECONDS = 60;
/** Longest `SPOOLCTL_LOCK_WAIT` accepted, seconds (one hour). */
export const LOCK_WAIT_MAX_SECONDS = 3600;
