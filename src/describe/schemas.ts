/**
 * The JSON Schemas of the contract (`spoolctl schema`, docs/contract.md "JSON
 * Schema export"): the envelope, each verb's `data`, and the frames of raw
 * streams. Codes come from the error registry, so the schema cannot drift from
 * what the CLI emits.
 */
import { envelopeSchemaOf } from "../contract/envelope-schema.ts";
import { ERROR_CODES, WARNING_CODES } from "../contract/errors.ts";
import { any, DIALECT, type JsonSchema } from "../contract/schema-kit.ts";
import { CORE_DATA_SCHEMAS } from "./schemas-core.ts";
import { EDIT_DATA_SCHEMAS } from "./schemas-edits.ts";
import { JOB_DATA_SCHEMAS } from "./schemas-jobs.ts";
import { LANE_DATA_SCHEMAS } from "./schemas-lanes.ts";
import { OPERATOR_DATA_SCHEMAS, type SchemaData, STREAM_SCHEMAS } from "./schemas-operator.ts";
import { RECURRING_DATA_SCHEMAS } from "./schemas-recurring.ts";
import { REPORT_DATA_SCHEMAS } from "./schemas-reports.ts";

/** Data schemas of every verb that has one, by verb name. */
const DATA_SCHEMAS: Record<string, JsonSchema> = {
  ...CORE_DATA_SCHEMAS,
  ...LANE_DATA_SCHEMAS,
  ...JOB_DATA_SCHEMAS,
  ...EDIT_DATA_SCHEMAS,
  ...OPERATOR_DATA_SCHEMAS,
  ...REPORT_DATA_SCHEMAS,
  ...RECURRING_DATA_SCHEMAS,
};

/** The envelope: `{ok, tool_version, data, meta, warnings, commands, errors}` (src/contract/envelope-schema.ts), its codes from the registry. */
function envelopeSchema(): JsonSchema {
  return { $schema: DIALECT, ...envelopeSchemaOf(Object.keys(ERROR_CODES), Object.keys(WARNING_CODES)) };
}

/**
 * Everything `spoolctl schema` exports, for the verbs in `verbNames` (the
 * registry); a verb without a known data schema gets `{}` (any JSON).
 */
export function schemaExport(verbNames: string[]): SchemaData {
  return {
    dialect: DIALECT,
    envelope_schema: envelopeSchema(),
    verbs: Object.fromEntries(verbNames.map((name) => [name, DATA_SCHEMAS[name] ?? any])),
    streams: { ...STREAM_SCHEMAS },
  };
}
