/**
 * The house rules of src/ (docs/architecture.md "The house", CONTRIBUTING.md
 * "The layers"), read from the source text, nothing run:
 *
 * 1. imports point one way: a file imports its own layer or one below it,
 *    never one above (the table {@link RANKS});
 * 2. no import circle between the files of src/;
 * 3. no store transaction is opened outside src/store/: no `.read(` or
 *    `.write(` call above it but on an output stream (issue 18's grep).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

/**
 * Each top folder of src/ (or file at its top) and its rank, lowest at the
 * bottom: a file may import from its own rank or a lower one, never a higher.
 */
const RANKS: Record<string, number> = {
  contract: 0,
  model: 1,
  describe: 2,
  ops: 3,
  store: 4,
  worker: 5,
  ui: 6,
  web: 7,
  commands: 8,
  "cli.ts": 9,
};

/** Every .ts file of src/, relative to the repository (`src/ops/add.ts`), sorted. */
const FILES = [...new Bun.Glob("**/*.ts").scanSync(SRC)].map((f) => `src/${f}`).sort();

/** A file's text by its path relative to the repository. */
const TEXT = new Map(FILES.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));

/**
 * The relative specifiers of `text`: `import … from "…"`, `export … from "…"`,
 * `import "…"`, `import("…")` (also `typeof import("…")`) and `require("…")`.
 * Static text: a specifier built at run time is not seen (src/ has none).
 */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out.filter((s) => s.startsWith("."));
}

/** The file a relative specifier of `file` names, relative to the repository (`src/model/job.ts`). */
function target(file: string, spec: string): string {
  return relative(ROOT, normalize(join(ROOT, dirname(file), spec)));
}

/** The layer of a file of src/: its top folder, or its own name at the top. */
function layerOf(file: string): string {
  return file.split("/")[1]!;
}

/** Every import of one file of src/ by another: [importer, specifier, imported]. */
const EDGES = FILES.flatMap((file) =>
  specifiers(TEXT.get(file)!)
    .map((spec) => [file, spec, target(file, spec)] as const)
    .filter(([, , to]) => to.startsWith("src/")),
);

/** The imports that point up: each as `file imports "specifier" (layer rank → layer rank)`. */
function upwardImports(): string[] {
  const out: string[] = [];
  for (const [file, spec, to] of EDGES) {
    const from = layerOf(file);
    const into = layerOf(to);
    if (RANKS[into]! > RANKS[from]!)
      out.push(`${file} imports "${spec}" (${from} ${RANKS[from]} → ${into} ${RANKS[into]})`);
  }
  return out;
}

/** One import circle between files of src/ as its path (`a → b → a`), or null when there is none. */
function oneCycle(): string[] | null {
  const next = new Map<string, string[]>(FILES.map((f) => [f, []]));
  for (const [file, , to] of EDGES) next.get(file)?.push(to);
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): string[] | null => {
    state.set(file, "open");
    path.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === "open") return [...path.slice(path.indexOf(to)), to];
      if (state.get(to) === undefined) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(file, "done");
    return null;
  };
  for (const file of FILES) {
    if (state.get(file) !== undefined) continue;
    const found = visit(file);
    if (found) return found;
  }
  return null;
}

/**
 * What a `.read(`/`.write(` call outside src/store/ may be called on: the
 * process's streams, a stream or pipe held as `out`, a child's stdin, an
 * output file's `tail`, and Bun's own file I/O. Anything else (`store`,
 * `ctx.store`, an expression) counts as a store transaction.
 */
const STREAM_RECEIVER = /^(process\.(stdout|stderr)|(this\.)?out|(this\.)?(proc|child)\.stdin|(this\.)?tail|Bun)$/;

/** The `.read(`/`.write(` calls outside src/store/ on anything but a stream, as `file:line: text`. */
function transactionsOutsideStore(): string[] {
  const out: string[] = [];
  for (const file of FILES) {
    if (layerOf(file) === "store") continue;
    const lines = TEXT.get(file)!.split("\n");
    for (const [i, line] of lines.entries()) {
      for (const m of line.matchAll(/([\w$.]*)\.(read|write)\(/g)) {
        if (!STREAM_RECEIVER.test(m[1]!)) out.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    }
  }
  return out;
}

describe("house rules of src/", () => {
  test("the layer table names every top folder of src/", () => {
    expect([...new Set(FILES.map(layerOf))].filter((l) => RANKS[l] === undefined)).toEqual([]);
    // The parser sees imports at all: a rule over no edges could not fail.
    expect(EDGES.length).toBeGreaterThan(FILES.length);
  });

  test("imports point down: no file imports a layer above its own", () => {
    expect(upwardImports()).toEqual([]);
  });

  test("no import circle between files", () => {
    const cycle = oneCycle();
    expect(cycle === null ? "none" : cycle.join(" → ")).toBe("none");
  });

  test("no store transaction is opened outside src/store/", () => {
    expect(transactionsOutsideStore()).toEqual([]);
  });
});
