/**
 * `add --matrix k=v1,v2 …` and a `--from` line's `"matrix"` (docs/architecture.md
 * "Matrix"): one job spec per cell of the axes' product, each with `{k}`
 * placeholders of its command filled and named by its cell
 * (`test.sh[os=linux,node=20]`). Pure: specs in, specs out; the add of them
 * all is one transaction (`addJobs`).
 */
import { basename } from "node:path";
import { SpoolError } from "../contract/errors.ts";
import type { AddInput } from "./job-spec.ts";

/** One axis: its key and its values, in the order given. */
export interface MatrixAxis {
  key: string;
  values: string[];
}

/** Cells of one matrix at most (a typo such as 1..100000 must not queue a day of work). */
export const MATRIX_MAX_CELLS = 10_000;

/** What an axis key may be: a placeholder name. */
const AXIS_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** A `{key}` placeholder; `${HOME}` is the shell's, left alone. */
const PLACEHOLDER = /(?<!\$)\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

function bad(where: string, message: string, remediation: string, detail: Record<string, unknown> = {}): SpoolError {
  return new SpoolError("INVALID_INPUT", `${where}: ${message}; nothing was added`, { remediation, detail });
}

/**
 * Parses `--matrix` values (`os=linux,mac`), one axis each, in order. Raises
 * `INVALID_INPUT` for a value without `=`, a bad or repeated key, an empty
 * axis (`os=`, `os=a,,b`) and a product over {@link MATRIX_MAX_CELLS}.
 */
export function parseMatrixFlags(values: string[], where = "--matrix"): MatrixAxis[] {
  const axes = values.map((raw) => {
    const eq = raw.indexOf("=");
    if (eq < 0)
      throw bad(`${where} ${raw}`, "expected KEY=V1,V2,…", "write each axis as --matrix os=linux,mac", { value: raw });
    const values = raw.slice(eq + 1) === "" ? [] : raw.slice(eq + 1).split(",");
    return { key: raw.slice(0, eq), values };
  });
  return checkAxes(axes, where);
}

/**
 * Reads a `--from` line's `"matrix"`: an object of axis key → list of values
 * (strings or numbers), e.g. `{"os": ["linux", "mac"], "node": [20, 22]}`.
 * Raises `INVALID_INPUT` as {@link parseMatrixFlags} does, naming `where` (`--from line 3: matrix`).
 */
export function parseMatrixField(value: unknown, where: string): MatrixAxis[] {
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw bad(where, "must be an object of lists", 'write "matrix": {"os": ["linux", "mac"], "node": [20, 22]}');
  const axes = Object.entries(value).map(([key, list]) => {
    if (!Array.isArray(list) || list.some((v) => typeof v !== "string" && typeof v !== "number"))
      throw bad(`${where}.${key}`, "must be a list of strings or numbers", `write "${key}": ["a", "b"]`);
    return { key, values: list.map(String) };
  });
  return checkAxes(axes, where);
}

function checkAxes(axes: MatrixAxis[], where: string): MatrixAxis[] {
  const seen = new Set<string>();
  let cells = 1;
  for (const axis of axes) {
    if (!AXIS_KEY.test(axis.key))
      throw bad(
        where,
        `axis ${JSON.stringify(axis.key)} is no placeholder name`,
        "name axes with letters, digits, _ or - (os, node_version)",
        {
          axis: axis.key,
        },
      );
    if (seen.has(axis.key))
      throw bad(
        where,
        `axis ${axis.key} is given twice`,
        `list every value of ${axis.key} in one axis: ${axis.key}=a,b`,
        {
          axis: axis.key,
        },
      );
    seen.add(axis.key);
    if (axis.values.length === 0 || axis.values.some((v) => v === ""))
      throw bad(
        where,
        `axis ${axis.key} has an empty value list or an empty value`,
        `give it values: ${axis.key}=a,b`,
        {
          axis: axis.key,
        },
      );
    cells *= axis.values.length;
    if (cells > MATRIX_MAX_CELLS)
      throw bad(
        where,
        `the axes make more than ${MATRIX_MAX_CELLS.toLocaleString("en-US")} cells`,
        "split the matrix over several adds, or drop values",
        { max_cells: MATRIX_MAX_CELLS },
      );
  }
  return axes;
}

/** The cells of `axes`, first axis slowest (`os=linux,node=20`, `os=linux,node=22`, …). */
function cellsOf(axes: MatrixAxis[]): Record<string, string>[] {
  let cells: Record<string, string>[] = [{}];
  for (const axis of axes) cells = cells.flatMap((c) => axis.values.map((v) => ({ ...c, [axis.key]: v })));
  return cells;
}

/** `text` with each `{key}` of `cell` filled. */
function fill(text: string, cell: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (whole, key: string) => cell[key] ?? whole);
}

/** The first placeholder of `texts` no axis has, or null. */
function unknownPlaceholder(texts: string[], axes: MatrixAxis[]): string | null {
  const keys = new Set(axes.map((a) => a.key));
  for (const text of texts) for (const m of text.matchAll(PLACEHOLDER)) if (!keys.has(m[1]!)) return m[1]!;
  return null;
}

/** What a cell's name starts with: the name or ref given, else the program's base name (`./test.sh` → `test.sh`). */
function baseName(input: AddInput): string {
  if (input.name !== undefined) return input.name;
  if (input.ref !== undefined) return input.ref;
  const program = input.argv?.[0] ?? input.command?.trim().split(/\s+/)[0] ?? "job";
  return basename(program) || "job";
}

/**
 * One spec per cell of `axes`: `{k}` filled in the command (argv words or
 * the `-c` string), the cwd and env values; named `BASE[k=v,…]`; a key given
 * gets the same suffix (one key per cell). A `ref` becomes the cell's name
 * too, so other lines' `needs` of the bare ref are widened to every cell by
 * {@link widenNeeds}. Raises `INVALID_INPUT` naming `where` for a placeholder
 * no axis has (a command without any placeholder is fine: a repeat).
 */
export function expandMatrix(input: AddInput, axes: MatrixAxis[], where: string): AddInput[] {
  const texts = [...(input.argv ?? []), ...(input.command === undefined ? [] : [input.command])];
  if (input.cwd !== undefined) texts.push(input.cwd);
  const unknown = unknownPlaceholder(texts, axes);
  if (unknown !== null)
    throw bad(
      where,
      `the command holds {${unknown}}, which no axis fills (axes: ${axes.map((a) => a.key).join(", ")})`,
      `add --matrix ${unknown}=V1,V2, or write the braces as the shell's \${${unknown}}`,
      { placeholder: unknown },
    );
  const base = baseName(input);
  return cellsOf(axes).map((cell) => {
    const suffix = `[${Object.entries(cell)
      .map(([k, v]) => `${k}=${v}`)
      .join(",")}]`;
    const out: AddInput = {
      ...input,
      name: `${base}${suffix}`,
      ...(input.argv ? { argv: input.argv.map((a) => fill(a, cell)) } : {}),
      ...(input.command !== undefined ? { command: fill(input.command, cell) } : {}),
      ...(input.cwd !== undefined ? { cwd: fill(input.cwd, cell) } : {}),
      ...(input.env ? { env: input.env.map((e) => fill(e, cell)) } : {}),
      ...(input.key !== undefined ? { key: `${input.key}${suffix}` } : {}),
      ...(input.ref !== undefined ? { ref: `${input.ref}${suffix}` } : {}),
    };
    return out;
  });
}

/**
 * Widens `needs` naming a matrix line's bare ref to the refs of all its cells
 * (`needs: ["test"]` waits for every `test[…]`, as a GitHub Actions job needing
 * a matrix job does). `cellRefs`: bare ref → its cells' refs.
 */
function widenNeeds(inputs: AddInput[], cellRefs: Map<string, string[]>): AddInput[] {
  if (cellRefs.size === 0) return inputs;
  return inputs.map((i) =>
    i.needs ? { ...i, needs: [...new Set(i.needs.flatMap((n) => cellRefs.get(n) ?? [n]))] } : i,
  );
}

/**
 * The `--from` lines as specs to add, each with its label for messages
 * (`line 3`, `line 3 [os=linux]`): a line with a matrix (its own, else
 * `flagAxes` of the command line's `--matrix`) becomes one spec per cell, and
 * needs of a matrix line's bare ref are widened to its cells.
 */
export function expandLines(
  lines: { input: AddInput; line: number; matrix?: MatrixAxis[] }[],
  flagAxes: MatrixAxis[] | null,
): { input: AddInput; line: number; label: string }[] {
  const out: { input: AddInput; line: number; label: string }[] = [];
  const cellRefs = new Map<string, string[]>();
  let cellCount = 0;
  for (const l of lines) {
    const axes = l.matrix ?? flagAxes;
    if (!axes) {
      out.push({ input: l.input, line: l.line, label: `line ${l.line}` });
      continue;
    }
    const cells = expandMatrix(l.input, axes, `--from line ${l.line}`);
    cellCount += cells.length;
    if (cellCount > MATRIX_MAX_CELLS)
      throw bad(
        `--from line ${l.line}`,
        `the matrices of this add make more than ${MATRIX_MAX_CELLS.toLocaleString("en-US")} cells`,
        "split the lines over several adds, or drop values",
        { max_cells: MATRIX_MAX_CELLS },
      );
    if (l.input.ref !== undefined)
      cellRefs.set(
        l.input.ref,
        cells.map((c) => c.ref!),
      );
    const base = baseName(l.input).length;
    for (const c of cells) out.push({ input: c, line: l.line, label: `line ${l.line} ${c.name!.slice(base)}` });
  }
  const widened = widenNeeds(
    out.map((o) => o.input),
    cellRefs,
  );
  return out.map((o, i) => ({ ...o, input: widened[i]! }));
}
