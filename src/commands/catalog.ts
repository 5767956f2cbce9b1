/**
 * Every verb loaded from the registry, for the verbs that describe the CLI
 * itself (`capabilities`, `schema`, `brief`): they read the same definitions
 * the parser and `--help` use, so they cannot drift apart.
 */
import { ALIASES, COMPOUND, VERBS } from "./registry.ts";
import type { Verb } from "./verb.ts";

/** A loaded verb with its root-help summary. */
export interface CatalogEntry {
  verb: Verb<unknown>;
  summary: string;
}

/** Loads every registered verb, in registry order. */
export async function loadCatalog(): Promise<CatalogEntry[]> {
  return Promise.all(Object.values(VERBS).map(async ({ summary, load }) => ({ verb: (await load()) as Verb<unknown>, summary })));
}

/** Two-word forms and what they run, e.g. `"dlq list": "list --state dead"`. */
export function compoundForms(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [first, group] of Object.entries(COMPOUND)) {
    for (const [second, rewrite] of Object.entries(group)) out[`${first} ${second}`] = rewrite([]).join(" ");
  }
  return out;
}

/** One-word aliases and their verbs. */
export function aliasForms(): Record<string, string> {
  return { ...ALIASES };
}
