/**
 * The JSON Schemas of the contract (`spoolctl schema`, docs/contract.md "JSON
 * Schema export"): the envelope, each verb's `data`, and the frames of raw
 * streams. Codes come from the error registry, so the schema cannot drift from
 * what the CLI emits.
 */
import { ERROR_CODES, WARNING_CODES } from "../contract/errors.ts";
import {
  any,
  anyObject,
  arrayOf,
  bool,
  DIALECT,
  enumOf,
  int,
  type JsonSchema,
  nullable,
  object,
  optional,
  str,
} from "./schema-kit.ts";
import { CORE_DATA_SCHEMAS } from "./schemas-core.ts";
import { JOB_DATA_SCHEMAS } from "./schemas-jobs.ts";
import { LANE_DATA_SCHEMAS } from "./schemas-lanes.ts";
import { OPERATOR_DATA_SCHEMAS, STREAM_SCHEMAS } from "./schemas-operator.ts";
import { RECURRING_DATA_SCHEMAS } from "./schemas-recurring.ts";
import { REPORT_DATA_SCHEMAS } from "./schemas-reports.ts";

/** Data schemas of every verb that has one, by verb name. */
const DATA_SCHEMAS: Record<string, JsonSchema> = {
  ...CORE_DATA_SCHEMAS,
  ...LANE_DATA_SCHEMAS,
  ...JOB_DATA_SCHEMAS,
  ...OPERATOR_DATA_SCHEMAS,
  ...REPORT_DATA_SCHEMAS,
  ...RECURRING_DATA_SCHEMAS,
};

/** The envelope: `{ok, tool_version, data, meta, warnings, commands, errors}`. */
function envelopeSchema(): JsonSchema {
  const errorObject = object({
    code: enumOf(Object.keys(ERROR_CODES)),
    message: str,
    exit_code: int,
    remediation: str,
    did_you_mean: optional(nullable(str)),
    detail: optional(anyObject),
  });
  const meta = object({
    request_id: str,
    ts_iso: str,
    elapsed_ms: int,
    contract_version: str,
    data_hash: str,
    pagination: optional(
      object({ cursor: int, first_id: nullable(int), limit: optional(int), truncated: optional(bool) }),
    ),
    wait: optional(object({ reason: enumOf(["records_available", "timeout"]), waited_ms: int })),
  });
  return {
    $schema: DIALECT,
    ...object({
      ok: bool,
      tool_version: str,
      data: any,
      meta,
      warnings: arrayOf(object({ code: enumOf(Object.keys(WARNING_CODES)), message: str })),
      commands: arrayOf(str),
      errors: arrayOf(errorObject),
    }),
  };
}

/** `schema --json` data. */
export interface SchemaExport {
  dialect: string;
  envelope_schema: JsonSchema;
  verbs: Record<string, JsonSchema>;
  streams: Record<string, JsonSchema>;
}

/**
 * Everything `spoolctl schema` exports, for the verbs in `verbNames` (the
 * registry); a verb without a known data schema gets `{}` (any JSON).
 */
export function schemaExport(verbNames: string[]): SchemaExport {
  return {
    dialect: DIALECT,
    envelope_schema: envelopeSchema(),
    verbs: Object.fromEntries(verbNames.map((name) => [name, DATA_SCHEMAS[name] ?? any])),
    streams: { ...STREAM_SCHEMAS },
  };
}
