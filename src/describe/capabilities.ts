/**
 * The machine-readable contract (`spoolctl capabilities`, docs/contract.md):
 * verbs with their flags (from the very definitions the parser and `--help`
 * use), exit and error codes, states, events, limits, settings and
 * environment variables. Built from the sources of truth, never written by
 * hand.
 */

import { CONTRACT_VERSION } from "../contract/envelope.ts";
import { ERROR_CODES, EXIT, WARNING_CODES } from "../contract/errors.ts";
import type { FlagDef, VerbSpec } from "../contract/flags.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import { ATTEMPT_STATES, EVENTS, FAILURE_REASONS, JOB_STATES, REPORTED_STATES } from "../model/job.ts";
import { DEFAULTS, LIMITS, LOCK_WAIT_DEFAULT_SECONDS, LOCK_WAIT_MAX_SECONDS } from "../model/limits.ts";
import { CONFIG_FILE, CONFIG_KEYS, DB_PATH_PRECEDENCE } from "../model/location.ts";
import { HEARTBEAT_SECONDS, KILL_GRACE_SECONDS, KNOB_BOUNDS, REAP_FLOOR_SECONDS } from "../model/timing.ts";
import type { CapabilitiesData, SettingView } from "./schemas-operator.ts";

/** One flag or positional as `capabilities` publishes it. */
interface FlagCapability {
  name: string;
  /** `--name` for flags; the name for positionals. */
  flag: string;
  kind: "flag" | "positional";
  aliases: string[];
  /** `boolean`, or the value's type (src/contract/flags.ts `ValueType`). */
  type: string;
  /** A named grammar the value follows (`lane`, `worker-id`), or null. */
  format: string | null;
  value_hint: string | null;
  description: string;
  default: string | boolean | null;
  repeatable: boolean;
  required: boolean;
  value_required: boolean;
  choices: string[] | null;
  /** Smallest and largest accepted value (seconds for durations), or null. */
  minimum: number | null;
  maximum: number | null;
}

/** The published type of a definition: what the parser checks the value as. */
function typeOf(def: FlagDef): string {
  if (def.type === "boolean") return "boolean";
  return def.valueType ?? (def.choices ? "enum" : "string");
}

/** Publishes one flag definition. */
function flagCapability(name: string, def: FlagDef): FlagCapability {
  const positional = def.type === "positional";
  return {
    name,
    flag: positional ? name : `--${name}`,
    kind: positional ? "positional" : "flag",
    aliases: def.alias ? [`-${def.alias}`] : [],
    type: typeOf(def),
    format: def.format ?? null,
    value_hint: def.valueHint ?? null,
    description: def.description,
    default: def.default ?? null,
    repeatable: Boolean(def.repeatable || def.variadic),
    required: Boolean(def.required),
    value_required: def.type === "string",
    choices: def.choices ? [...def.choices] : null,
    minimum: def.min ?? null,
    maximum: def.max ?? null,
  };
}

/** A verb's entry. */
function verbCapability(summary: string, verb: VerbSpec) {
  const all = Object.entries(verb.flags).map(([name, def]) => flagCapability(name, def));
  return {
    summary,
    description: verb.description,
    aliases: verb.aliases ?? [],
    mutates: Boolean(verb.mutates),
    flags: all.filter((f) => f.kind === "flag"),
    positionals: all.filter((f) => f.kind === "positional"),
    examples: verb.examples,
    data_schema: `spoolctl schema --json → data.verbs.${verb.name}`,
  };
}

/** JSON-safe limits (patterns as their source text). */
function limits(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(LIMITS, (_k, v) => (v instanceof RegExp ? v.source : v)));
}

const EXIT_MEANINGS: Record<number, { meaning: string; retryable: boolean | null }> = {
  [EXIT.OK]: { meaning: "success (including empty results)", retryable: null },
  [EXIT.USER_INPUT]: { meaning: "user input error", retryable: false },
  [EXIT.SAFETY_BLOCK]: { meaning: "refused for safety; an explicit confirmation flag exists", retryable: false },
  [EXIT.ENVIRONMENT]: { meaning: "internal or environment error (doctor: not ready)", retryable: false },
  [EXIT.TRANSIENT]: {
    meaning: "transient failure (LOCKED, TIMEOUT); retry after a short delay",
    retryable: true,
  },
  [EXIT.CONFLICT]: { meaning: "conflict: the state changed underneath or a key is taken", retryable: false },
  [EXIT.JOB_FAILED]: { meaning: "an awaited job ended dead or canceled (ok: true)", retryable: false },
};

/** One queue-wide setting as `capabilities` publishes it: its meaning and bounds (a `parse` member is left out). */
type SettingCapability = Pick<SettingView, "default" | "unit" | "applies_at" | "description"> & {
  min: number;
  max: number;
  parse?: unknown;
};

/**
 * Input of {@link buildCapabilities}: every verb's definition with its summary, the two-word forms with
 * what they run, and the settings table (`SETTINGS` of src/ops/config.ts, a layer above this one:
 * docs/architecture.md "The house").
 */
export interface CapabilitiesInput {
  verbs: { spec: VerbSpec; summary: string }[];
  compound: Record<string, string>;
  settings: Record<string, SettingCapability>;
}

/**
 * The whole capabilities document (`capabilities --json` data). `aliases`
 * (one-word alternative verb names) is empty: there are none, and the key
 * stays for contract version 2 (docs/contract.md "Stability"). Its type is
 * the builder's own, richer than its deliberately loose schema (which lists
 * only the keys that must be present); `satisfies` holds it to that schema's
 * type, {@link CapabilitiesData}.
 */
export function buildCapabilities(input: CapabilitiesInput) {
  const codeRegistry: Record<string, unknown> = {};
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    codeRegistry[code] = {
      appears_in: ["errors"],
      exit_code: info.exit_code,
      retryable: info.retryable,
      summary: info.remediation,
    };
  }
  for (const [code, summary] of Object.entries(WARNING_CODES))
    codeRegistry[code] = { appears_in: ["warnings"], retryable: null, summary };
  const knob = (description: string, dflt: number | string) => ({
    type: "number",
    unit: "seconds",
    default: dflt,
    minimum: KNOB_BOUNDS.min,
    maximum: KNOB_BOUNDS.max,
    test_knob: true,
    consumed_by: ["work"],
    description: `${description}; out-of-range or malformed values are ignored`,
  });
  return {
    tool_name: "spoolctl",
    tool_version: TOOL_VERSION,
    contract_version: CONTRACT_VERSION,
    verbs: Object.fromEntries(input.verbs.map(({ spec, summary }) => [spec.name, verbCapability(summary, spec)])),
    aliases: {},
    compound_commands: input.compound,
    global_flags: {
      db_scope: "every verb that reads or writes the queue",
      flags: [
        { name: "json", flag: "--json", type: "boolean", description: "print one JSON envelope on stdout" },
        { name: "db", flag: "--db", type: "path", description: "queue database path" },
        { name: "help", flag: "--help", aliases: ["-h"], type: "boolean", description: "usage and examples of a verb" },
      ],
    },
    exit_codes: Object.fromEntries(Object.entries(EXIT_MEANINGS).map(([code, v]) => [code, v])),
    error_codes: Object.keys(ERROR_CODES),
    warning_codes: Object.keys(WARNING_CODES),
    code_registry: codeRegistry,
    job_states: [...JOB_STATES],
    reported_states: [...REPORTED_STATES],
    state_aliases: { pending: "queued", processing: "running", completed: "done" },
    attempt_states: [...ATTEMPT_STATES],
    failure_reasons: [...FAILURE_REASONS],
    failure_groups: {
      command: "spoolctl list --state dead --group --json",
      signature: ["state", "failure_reason", "exit_code or signal", "last non-empty stderr line, masked"],
      masks: {
        "<time>": "timestamps",
        "<hex>": "UUIDs and hex ids",
        "<host>": "host names, IPs, URL hosts",
        "<path>": "file paths",
        "<n>": "numbers",
      },
      filters: ["--queue", "--tag", "--since", "--failure-reason", "--match"],
      filter_verbs: ["triage", "retry --all", "list"],
    },
    events: [...EVENTS],
    limits: limits(),
    defaults: { ...DEFAULTS },
    settings: Object.fromEntries(Object.entries(input.settings).map(([k, { parse: _parse, ...meta }]) => [k, meta])),
    env_vars: {
      SPOOLCTL_DB: {
        type: "path",
        default: null,
        consumed_by: ["every queue verb"],
        shadowed_by: "--db",
        description: "queue database path",
      },
      SPOOLCTL_TRUSTED_DIRS: {
        type: "string",
        default: null,
        consumed_by: ["every queue verb without --db or SPOOLCTL_DB"],
        description:
          "':'-separated folders (those holding a .spoolctl/) whose .spoolctl/ is used even when another user owns it; '*' trusts every folder (else such a folder is skipped with UNTRUSTED_FOLDER)",
      },
      SPOOLCTL_LOCK_WAIT: {
        type: "number",
        unit: "seconds",
        default: LOCK_WAIT_DEFAULT_SECONDS,
        minimum: 0,
        maximum: LOCK_WAIT_MAX_SECONDS,
        consumed_by: ["add", "enqueue", "status"],
        description:
          "how long add and status ride out a queue locked by other writers, or a PostgreSQL server out of connection slots, before LOCKED (0: give up after the 5 s busy timeout)",
      },
      SPOOLCTL_SYNCHRONOUS: {
        type: "choice",
        choices: ["full", "normal"],
        default: "full",
        consumed_by: ["every verb that writes a SQLite queue"],
        description:
          "full: every commit is synced before it is acknowledged (survives a power cut); normal: faster, the last commits can roll back on power loss",
      },
      SPOOLCTL_TEST_HEARTBEAT_INTERVAL: knob("test knob: heartbeat interval of workers", HEARTBEAT_SECONDS),
      SPOOLCTL_TEST_REAP_THRESHOLD: knob(
        "test knob: heartbeat age after which a running job is a reap candidate",
        `max(4 × heartbeat, ${REAP_FLOOR_SECONDS})`,
      ),
      SPOOLCTL_TEST_CLOCK_OFFSET_FILE: {
        type: "string",
        default: null,
        test_knob: true,
        consumed_by: ["every verb on a PostgreSQL queue"],
        description:
          "test knob: a file holding seconds to add to this process's wall clock (re-read every 100 ms), a stepped clock for tests; a missing file or no number is no shift",
      },
      TRACEPARENT: {
        type: "string",
        default: null,
        consumed_by: ["add", "enqueue"],
        description:
          "W3C traceparent of the adder's span, kept with the job (with TRACESTATE and BAGGAGE); each attempt's command gets a TRACEPARENT of its own span, a child of it (a malformed one is dropped: TRACE_CONTEXT_INVALID)",
      },
      OTEL_EXPORTER_OTLP_ENDPOINT: {
        type: "string",
        default: null,
        consumed_by: ["work"],
        description:
          "OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318): the worker exports each attempt's span there, batched; unset: nothing of OpenTelemetry is loaded",
      },
      NO_COLOR: {
        type: "flag",
        default: null,
        consumed_by: ["human output"],
        description: "any value turns color off",
      },
    },
    config: {
      supported: true,
      path: CONFIG_FILE,
      format: "json",
      schema_version: 1,
      keys: [...CONFIG_KEYS],
      precedence: [...DB_PATH_PRECEDENCE],
    },
    output_modes: ["text", "envelope", "frames", "raw"],
    timing: {
      heartbeat_seconds: HEARTBEAT_SECONDS,
      reap_threshold_seconds: `max(4 × heartbeat, ${REAP_FLOOR_SECONDS})`,
      kill_grace_seconds: KILL_GRACE_SECONDS,
    },
  } satisfies CapabilitiesData;
}
