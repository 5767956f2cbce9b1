/**
 * docs/contract.md documents the contract (issue 4 "Done when"): every error
 * and warning code of the registry appears in it with its exit code, and its
 * generated tables are those of the current registry.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { CONTRACT_VERSION } from "../src/contract/envelope.ts";
import { ERROR_CODES, WARNING_CODES } from "../src/contract/errors.ts";
import { DOC, documentedTables, generatedTables } from "./contract-doc-tables.ts";

const text = readFileSync(DOC, "utf8");

test("every error code appears in docs/contract.md with its exit code and retryability", () => {
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    expect([code, text.includes(`| \`${code}\` | ${info.exit_code} | ${info.retryable ? "yes" : "no"} |`)]).toEqual([
      code,
      true,
    ]);
  }
});

test("every warning code appears in docs/contract.md", () => {
  for (const code of Object.keys(WARNING_CODES)) expect([code, text.includes(`| \`${code}\` |`)]).toEqual([code, true]);
});

test("the generated tables are current (else: bun test/contract-doc-tables.ts --write)", () => {
  expect(documentedTables(text)).toBe(generatedTables());
});

test("the document names the contract version, the meta fields and the stream frames", () => {
  expect(text).toContain(`contract_version "${CONTRACT_VERSION}"`);
  for (const key of [
    "request_id",
    "ts_iso",
    "elapsed_ms",
    "data_hash",
    "pagination",
    "wait",
    "did_you_mean",
    "remediation",
  ])
    expect(text).toContain(`\`${key}\``);
  for (const frame of ['"type":"end"', '"type":"error"', "max_events", "idle_timeout", "events_follow_data"])
    expect(text).toContain(frame);
});
