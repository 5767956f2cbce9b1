/**
 * Every verb loaded from the registry, for the verbs that describe the CLI
 * itself (`capabilities`, `completion`): they read the same definitions the
 * parser and `--help` use, so they cannot drift apart. The runner hands this
 * to them through their context, so that no verb imports the registry that
 * loads it.
 */
import { COMPOUND } from "./names.ts";
import { VERBS } from "./registry.ts";
import type { Catalog } from "./verb.ts";

/** Two-word forms and what they run, e.g. `"dlq list": "list --state dead"`. */
function compoundForms(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [first, group] of Object.entries(COMPOUND)) {
    for (const [second, rewrite] of Object.entries(group)) out[`${first} ${second}`] = rewrite([]).join(" ");
  }
  return out;
}

/** Loads every registered verb, in registry order, with the two-word forms. */
export async function loadCatalog(): Promise<Catalog> {
  const verbs = await Promise.all(
    Object.values(VERBS).map(async ({ summary, load }) => ({ spec: await load(), summary })),
  );
  return { verbs, compound: compoundForms() };
}
