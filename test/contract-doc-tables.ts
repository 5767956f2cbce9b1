/**
 * Generates the code tables of docs/contract.md from the registry
 * (src/contract/errors.ts) and the exit-code meanings of `capabilities`, so the
 * document cannot drift from what the CLI emits. test/contract-doc.test.ts
 * fails when the document's generated block is stale.
 *
 *   bun test/contract-doc-tables.ts           # print the block
 *   bun test/contract-doc-tables.ts --write   # rewrite it in docs/contract.md
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { ERROR_CODES, WARNING_CODES } from "../src/contract/errors.ts";
import { buildCapabilities } from "../src/describe/capabilities.ts";

export const DOC = resolve(import.meta.dir, "../docs/contract.md");
export const BEGIN = "<!-- BEGIN GENERATED TABLES (bun test/contract-doc-tables.ts --write) -->";
export const END = "<!-- END GENERATED TABLES -->";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const yesNo = (v: boolean | null) => (v === null ? "—" : v ? "yes" : "no");

/** The generated block, markers included. */
export function generatedTables(): string {
  const exits = buildCapabilities({ verbs: [], compound: {}, settings: {} }).exit_codes as Record<
    string,
    { meaning: string; retryable: boolean | null }
  >;
  const codesByExit = (exit: number) =>
    Object.entries(ERROR_CODES)
      .filter(([, info]) => info.exit_code === exit)
      .map(([code]) => `\`${code}\``)
      .join(", ") || "—";
  const lines = [
    BEGIN,
    "",
    "### Exit codes",
    "",
    "| exit | meaning | retryable | error codes |",
    "|---|---|---|---|",
    ...Object.entries(exits).map(
      ([exit, v]) => `| ${exit} | ${cell(v.meaning)} | ${yesNo(v.retryable)} | ${codesByExit(Number(exit))} |`,
    ),
    "",
    "### Error codes",
    "",
    "Every error object carries its code's exit code; `retryable` says whether running the same command again later may succeed. The remediation is the default one; a call site may give a more precise one.",
    "",
    "| code | exit | retryable | default remediation |",
    "|---|---|---|---|",
    ...Object.entries(ERROR_CODES).map(
      ([code, info]) => `| \`${code}\` | ${info.exit_code} | ${yesNo(info.retryable)} | ${cell(info.remediation)} |`,
    ),
    "",
    "### Warning codes",
    "",
    "A warning never changes the exit code or `ok`.",
    "",
    "| code | meaning |",
    "|---|---|",
    ...Object.entries(WARNING_CODES).map(([code, meaning]) => `| \`${code}\` | ${cell(meaning)} |`),
    "",
    END,
  ];
  return lines.join("\n");
}

/** The block as it stands in the document, or null when the markers are missing. */
export function documentedTables(text: string): string | null {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  return start === -1 || end === -1 ? null : text.slice(start, end + END.length);
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    const text = readFileSync(DOC, "utf8");
    const current = documentedTables(text);
    if (current === null) throw new Error(`${DOC} has no ${BEGIN} … ${END} block`);
    writeFileSync(DOC, text.replace(current, generatedTables()));
    console.log(`rewrote the tables of ${DOC}`);
  } else {
    console.log(generatedTables());
  }
}
