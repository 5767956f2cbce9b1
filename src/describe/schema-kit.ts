/**
 * A few builders for JSON Schema 2020-12 documents, so the contract's schemas
 * (`spoolctl schema`) read like the TypeScript types they describe.
 */

/** A JSON Schema document (2020-12). */
export type JsonSchema = { [key: string]: unknown };

/** The dialect every exported schema uses. */
export const DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** Integer. */
export const int: JsonSchema = { type: "integer" };
/** Any JSON number. */
export const num: JsonSchema = { type: "number" };
/** String. */
export const str: JsonSchema = { type: "string" };
/** Boolean. */
export const bool: JsonSchema = { type: "boolean" };
/** Anything. */
export const any: JsonSchema = {};

/** One of fixed strings. */
export function enumOf(values: readonly string[]): JsonSchema {
  return { type: "string", enum: [...values] };
}

/** A constant. */
export function constant(value: string | number | boolean): JsonSchema {
  return {
    type: typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value,
    const: value,
  };
}

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (typeof schema.type === "string") out.type = [schema.type, "null"];
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  if (schema.type === undefined) return { anyOf: [schema, { type: "null" }] };
  return out;
}

/** An array of `items`. */
export function arrayOf(items: JsonSchema): JsonSchema {
  return { type: "array", items };
}

/** An object with fixed keys, all required except `optional`, no others allowed. */
export function object(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return {
    type: "object",
    additionalProperties: false,
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
  };
}

/** An object used as a map from any key to `values`. */
export function mapOf(values: JsonSchema): JsonSchema {
  return { type: "object", additionalProperties: values };
}

/** Exactly one of several shapes. */
export function oneOf(...schemas: JsonSchema[]): JsonSchema {
  return { oneOf: schemas };
}
