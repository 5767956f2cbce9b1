/**
 * The advisory-lock keys of the PostgreSQL driver: every lock spoolctl takes
 * is the pair (LOCK_CLASS, one of these). Apart from migrations.ts because
 * both the migration runner and the schema's own SQL (schema-steps.ts) take them.
 */
/** First key of every advisory lock spoolctl takes ('SPOO'); the second says which. */
export const LOCK_CLASS = 0x53504f4f;
/** Second advisory-lock keys. */
export const LOCK_MIGRATE = 1;
export const LOCK_COMPACT = 2;
/** Folding `metric_counts`' delta rows (schema v18), apart from LOCK_COMPACT so neither fold waits for the other. */
export const LOCK_METRICS = 3;
/** Folding `dead_counts`' delta rows (dead-schema.ts), apart from the others so no fold waits for another. */
export const LOCK_DEAD_COUNTS = 4;
