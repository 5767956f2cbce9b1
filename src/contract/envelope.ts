/**
 * The JSON envelope (docs/contract.md "The envelope"): every verb under
 * `--json` prints exactly one `{ok, tool_version, data, meta, warnings,
 * commands, errors}` object on stdout.
 */
import type { envelopeSchemaOf, metaSchema, paginationSchema, waitMetaSchema } from "./envelope-schema.ts";
import type { ErrorCode, ErrorObject, Warning, WarningCode } from "./errors.ts";
import type { Static } from "./schema-kit.ts";
import { TOOL_VERSION } from "./version.ts";

/** Contract version of the envelope (docs/contract.md "Stability"). */
export const CONTRACT_VERSION = "2";

/** `meta.pagination` of list-like verbs (its schema: ./envelope-schema.ts `paginationSchema`). */
type Pagination = Static<typeof paginationSchema>;

/** `meta.wait` of a long-poll (its schema: ./envelope-schema.ts `waitMetaSchema`). */
export type WaitMeta = Static<typeof waitMetaSchema>;

/** `meta` of the envelope; times are ISO-8601 UTC, `elapsed_ms` integer milliseconds (schema: `metaSchema`). */
type Meta = Static<typeof metaSchema>;

/**
 * The envelope itself. `ok` is true iff `errors` is empty; on failure `data`
 * is null. Its schema (./envelope-schema.ts `envelopeSchemaOf`, over the
 * registry's codes) says `data` is any JSON, each verb's data having a schema
 * of its own: that much is derived, and `data` is typed by the verb's `T`
 * instead, which a schema cannot carry as a parameter.
 */
export type Envelope<T = unknown> = Omit<
  Static<ReturnType<typeof envelopeSchemaOf<ErrorCode, WarningCode>>>,
  "data"
> & {
  data: T | null;
};

/** What a verb hands back to be rendered: its data plus envelope extras. */
export interface VerbResult<T = unknown> {
  data: T;
  warnings?: Warning[];
  commands?: string[];
  pagination?: Pagination;
  wait?: WaitMeta;
  /** Exit code when the verb succeeded but reports an outcome (e.g. 6 from `wait`). */
  exitCode?: number;
  /**
   * The verb already wrote its whole output itself (a stream of NDJSON frames,
   * `events --follow`): the runner prints no envelope and no text.
   */
  streamed?: boolean;
}

/** JSON with object keys sorted, so the hash does not depend on insertion order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, (v as Record<string, unknown>)[k]]),
      );
    }
    return v;
  });
}

/** `sha256:<hex>` of the canonical JSON of `data`. */
function dataHash(data: unknown): string {
  // Bun's hasher: node:crypto costs ~15 ms to import on every CLI start.
  return `sha256:${new Bun.CryptoHasher("sha256").update(canonicalJson(data ?? null)).digest("hex")}`;
}

/** A fresh request id, `req_` + 16 hex characters. */
function newRequestId(): string {
  return `req_${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}`;
}

/**
 * Builds an envelope.
 * @param startedAt `performance.now()` at the start of the request (milliseconds).
 */
export function buildEnvelope<T>(
  startedAt: number,
  result: VerbResult<T> | null,
  errors: ErrorObject[] = [],
): Envelope<T> {
  const data = errors.length > 0 || !result ? null : result.data;
  const meta: Meta = {
    request_id: newRequestId(),
    ts_iso: new Date().toISOString(),
    elapsed_ms: Math.max(0, Math.round(performance.now() - startedAt)),
    contract_version: CONTRACT_VERSION,
    data_hash: dataHash(data),
  };
  if (result?.pagination) meta.pagination = result.pagination;
  if (result?.wait) meta.wait = result.wait;
  return {
    ok: errors.length === 0,
    tool_version: TOOL_VERSION,
    data,
    meta,
    warnings: result?.warnings ?? [],
    commands: result?.commands ?? [],
    errors,
  };
}
