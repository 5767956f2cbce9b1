/**
 * The envelope's JSON Schema (docs/contract.md "The envelope", "JSON Schema
 * export"): the one definition of its shape. `spoolctl schema` prints it
 * (src/describe/schemas.ts `envelopeSchema`), and the envelope's TypeScript
 * types (`Envelope`, `Meta`, `Pagination`, `WaitMeta` of ./envelope.ts,
 * `ErrorObject`, `Warning` of ./errors.ts) are `Static<>` of it.
 *
 * It lives here, at the bottom, because ./envelope.ts and ./errors.ts take
 * their types from it and contract imports nothing above it
 * (docs/architecture.md "The house"). They import it with `import type`, so
 * TypeBox loads only for `spoolctl schema`. The code enums are parameters
 * rather than imports of ./errors.ts, which would close an import circle.
 */
import { any, anyObject, arrayOf, bool, enumOf, int, nullable, object, optional, str } from "./schema-kit.ts";

/** `meta.pagination` of list-like verbs: the cursor of the next page and the first row's id (or null). */
export const paginationSchema = object({
  cursor: int,
  first_id: nullable(int),
  limit: optional(int),
  truncated: optional(bool),
  /**
   * `list --search`: the lowest job id this page searched. A search reads a
   * window of ids below the cursor, not the whole table; older jobs are
   * searched by following `cursor` (docs/architecture.md "Job filters").
   */
  searched_to: optional(int),
});

/** `meta.wait` of a long-poll (`events --wait`): why it returned and after how many milliseconds. */
export const waitMetaSchema = object({ reason: enumOf(["records_available", "timeout"]), waited_ms: int });

/** `meta`: times are ISO-8601 UTC, `elapsed_ms` integer milliseconds. */
export const metaSchema = object({
  request_id: str,
  ts_iso: str,
  elapsed_ms: int,
  contract_version: str,
  data_hash: str,
  pagination: optional(paginationSchema),
  wait: optional(waitMetaSchema),
});

/** A warning, `{code, message}`, its `code` one of `codes` (the registry's warning codes). */
export function warningSchema<const C extends string>(codes: readonly C[]) {
  return object({ code: enumOf(codes), message: str });
}

/** An error object, its `code` one of `codes` (the registry's error codes). */
export function errorObjectSchema<const C extends string>(codes: readonly C[]) {
  return object({
    code: enumOf(codes),
    message: str,
    exit_code: int,
    remediation: str,
    did_you_mean: optional(nullable(str)),
    detail: optional(anyObject),
  });
}

/**
 * The envelope `{ok, tool_version, data, meta, warnings, commands, errors}`
 * with the given error and warning codes; `data` is any JSON here (each
 * verb's own schema is exported beside it).
 */
export function envelopeSchemaOf<const E extends string, const W extends string>(
  errorCodes: readonly E[],
  warningCodes: readonly W[],
) {
  return object({
    ok: bool,
    tool_version: str,
    data: any,
    meta: metaSchema,
    warnings: arrayOf(warningSchema(warningCodes)),
    commands: arrayOf(str),
    errors: arrayOf(errorObjectSchema(errorCodes)),
  });
}
