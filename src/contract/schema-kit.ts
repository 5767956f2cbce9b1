/**
 * Builders for the contract's JSON Schemas (2020-12, `spoolctl schema`), on
 * TypeBox: each one returns the JSON Schema object itself and carries its
 * TypeScript type, so an envelope's data is written once, as a schema, and its
 * type is `Static<typeof schema>` (docs/contract.md "JSON Schema export").
 * TypeBox's own `Object`, `Integer`, `Array` … print the dialect as is; the
 * helpers here keep the export's spelling where TypeBox's differs (a nullable
 * scalar is `type: [T, "null"]`, a string enum is `enum`, a map is
 * `additionalProperties`, alternatives are `oneOf`).
 *
 * It lives in the bottom layer because the envelope's own schema
 * (./envelope-schema.ts) is built with it. Runtime code imports this module
 * only from `spoolctl schema` (through src/describe/schemas.ts): the simple
 * verbs import the derived types with `import type`, which loads nothing
 * (docs/benchmarks.md "CLI start-up").
 */
import {
  type Static,
  type TInteger,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnsafe,
  Type,
} from "@sinclair/typebox";

export type { Static } from "@sinclair/typebox";

/** A JSON Schema document (2020-12), as TypeBox builds it. */
export type JsonSchema = TSchema;

/** The dialect every exported schema uses. */
export const DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** Integer. */
export const int = Type.Integer();
/** Any JSON number. */
export const num = Type.Number();
/** String. */
export const str = Type.String();
/** Boolean. */
export const bool = Type.Boolean();
/** Anything (`{}`). */
export const any = Type.Unknown();
/** Any object (`{type: "object"}`), its keys unchecked. */
export const anyObject = Type.Unsafe<Record<string, unknown>>({ type: "object" });

/** One of fixed strings: `{type: "string", enum}`. */
export function enumOf<const V extends readonly string[]>(values: V): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: "string", enum: [...values] });
}

/** A constant, typed as its JSON type (`integer` for a whole number). */
export function constant<const V extends string | number | boolean>(value: V): TUnsafe<V> {
  const type = typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;
  return Type.Unsafe<V>({ type, const: value });
}

/** `schema` or null: `type: [T, "null"]` (and `null` in an enum), or `anyOf` for a schema without a type. */
export function nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  if (schema.type === undefined) return Type.Unsafe<Static<T> | null>({ anyOf: [schema, { type: "null" }] });
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(schema));
  if (typeof schema.type === "string") out.type = [schema.type, "null"];
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return Type.Unsafe<Static<T> | null>(out);
}

/** An array of `items`. */
export const arrayOf = <T extends TSchema>(items: T) => Type.Array(items);

/** A key that may be absent: it is left out of the object's `required`. */
export const optional = <T extends TSchema>(schema: T) => Type.Optional(schema);

/** An object with fixed keys, all required except those marked {@link optional}, no others allowed. */
export function object<P extends TProperties>(properties: P): TObject<P> {
  return Type.Object(properties, { additionalProperties: false });
}

/** An object with one integer per name in `names` (counts by state). */
export function countsOf<const N extends readonly string[]>(names: N): TObject<Record<N[number], TInteger>> {
  return object(Object.fromEntries(names.map((n) => [n, int])) as Record<N[number], TInteger>);
}

/** An object used as a map from any key to `values`: `additionalProperties: values`. */
export function mapOf<T extends TSchema>(values: T): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ type: "object", additionalProperties: values });
}

/** Exactly one of several shapes (`oneOf`). */
export function oneOf<T extends TSchema[]>(...schemas: T): TUnsafe<Static<T[number]>> {
  return Type.Unsafe<Static<T[number]>>({ oneOf: schemas });
}

/**
 * A loose object: these keys must be present, any others may be. Its type
 * names the required keys (their values `unknown`: the schema does not say).
 */
export function loose<const K extends readonly string[]>(
  required: K,
): TUnsafe<{ [P in K[number]]: unknown } & Record<string, unknown>> {
  return Type.Unsafe<{ [P in K[number]]: unknown } & Record<string, unknown>>({
    type: "object",
    required: [...required],
  });
}
