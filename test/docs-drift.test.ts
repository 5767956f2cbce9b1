/**
 * Docs that cannot drift (CONTRIBUTING.md "Docs that stay true"): every code
 * name the docs mention exists in the tree, every heading a comment or a
 * document cites exists, every flag the docs give a verb is one of that verb's
 * definitions, the operation and driver lists of docs/architecture.md match
 * the code, and every README block marked `sh runnable` runs.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { loadCatalog } from "../src/commands/catalog.ts";
import { COMPOUND } from "../src/commands/names.ts";
import { COMMON_FLAGS } from "../src/commands/verb.ts";
import { CLI } from "./support/temp-queue.ts";

const ROOT = resolve(import.meta.dir, "..");

function filesUnder(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...filesUnder(path, ext));
    else if (ext.test(name)) out.push(path);
  }
  return out;
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOCS = ["README.md", "CONTRIBUTING.md", ...filesUnder("docs", /\.md$/)];
const CODE = [...filesUnder("src", /\.ts$/), ...filesUnder("test", /\.ts$/), ...filesUnder("bench", /\.ts$/)];
const CODE_TEXT = CODE.map(read).join("\n");
const CODE_WORDS = new Set(CODE_TEXT.split(/[^\w$]+/));

/** Where `index` falls in `text`, as `path:line`. */
function at(path: string, text: string, index: number): string {
  return `${path}:${text.slice(0, index).split("\n").length}`;
}

describe("names in the docs", () => {
  test("every function or type name the docs put in backticks exists in src/, test/ or bench/", () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      const text = read(doc);
      for (const m of text.matchAll(
        /`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\(\))?`( \(since removed\)|, since removed)?/g,
      )) {
        if (m[3]) continue; // history, said as such
        const name = m[1]!.split(".").pop()!;
        const codeLike =
          m[2] !== undefined || /^[a-z][a-z0-9]*[A-Z]\w*$/.test(name) || /^[A-Z][a-z0-9]+[A-Z]\w*$/.test(name);
        if (codeLike && !CODE_WORDS.has(name)) missing.push(`${at(doc, text, m.index)} ${m[0]}`);
      }
    }
    expect(missing).toEqual([]);
  }, 60_000);

  // A dated section ("Durability (synchronous=FULL), 2026-12-01") is cited by its name before the date.
  test('every cited heading (docs/X.md "Heading", README "Heading") exists in that document', () => {
    const headings = new Map<string, Set<string>>();
    const headingsOf = (doc: string) => {
      let set = headings.get(doc);
      if (!set) {
        set = new Set(
          read(doc)
            .split("\n")
            .flatMap((l) => /^#{1,6}\s+(.*?)\s*$/.exec(l)?.[1] ?? []),
        );
        headings.set(doc, set);
      }
      return set;
    };
    const missing: string[] = [];
    let cited = 0;
    for (const path of [...CODE, ...DOCS]) {
      // Comment prefixes and line breaks inside a citation read as one space.
      const text = read(path).replace(/\n\s*(?:\*|\/\/)?\s*/g, " ");
      for (const m of text.matchAll(/\b((?:docs\/)?[\w-]+\.md)(?:'s)?,? (?:section |under )?["“]([^"”]{2,90})["”]/g)) {
        const doc = m[1]!.includes("/") || /^(README|CONTRIBUTING)\.md$/.test(m[1]!) ? m[1]! : `docs/${m[1]}`;
        if (m[2] === "Heading") continue; // the form itself, as docs/architecture.md explains it
        cited++;
        if (!DOCS.includes(doc)) missing.push(`${path}: ${doc} does not exist`);
        else if (
          ![...headingsOf(doc)].some((h) => h === m[2] || h.startsWith(`${m[2]} (`) || h.startsWith(`${m[2]}, `))
        )
          missing.push(`${path}: ${doc} "${m[2]}"`);
      }
    }
    expect(cited).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  }, 60_000);

  test('"The operations" lists exactly the operations of src/store/verbs/index.ts', () => {
    const ops = section(read("docs/architecture.md"), "The operations");
    const listed = new Set(bulletNames(ops));
    const exported = new Set(exportsOf(read("src/store/verbs/index.ts")));
    expect([...listed].filter((n) => !exported.has(n))).toEqual([]);
    expect([...exported].filter((n) => !listed.has(n))).toEqual([]);
  }, 60_000);

  test('"The driver contract" names every method of the driver interfaces', () => {
    const contract = section(read("docs/architecture.md"), "The driver contract");
    const named = new Set([...contract.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
    const methods = ["src/store/writer.ts", "src/store/reader.ts"].flatMap((f) =>
      [...read(f).matchAll(/^ {2}(\w+)\??\(/gm)].map((m) => `${relative("src/store", f)} ${m[1]}`),
    );
    expect(methods.length).toBeGreaterThan(50);
    expect(methods.filter((m) => !named.has(m.split(" ")[1]!))).toEqual([]);
  }, 60_000);
});

/** The text of `## title` up to the next `## ` heading. */
function section(text: string, title: string): string {
  const start = text.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`no section "${title}"`);
  const end = text.indexOf("\n## ", start + 4);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The backticked names before the first ": " of each bullet (a bullet runs on over its indented lines). */
function bulletNames(text: string): string[] {
  const bullets = text.split(/\n(?=- )/).filter((b) => b.startsWith("- "));
  return bullets.flatMap((b) => {
    const head = b.replace(/\n\s+/g, " ").split(": ")[0]!;
    return [...head.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
  });
}

/** The value names an `export { … } from` file exports. */
function exportsOf(text: string): string[] {
  return [...text.matchAll(/export\s+\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(",")
      .map(
        (n) =>
          n
            .trim()
            .split(/\s+as\s+/)
            .pop()!,
      )
      .filter((n) => n && !n.startsWith("type ")),
  );
}

/**
 * Flags of other programs the docs show (`--flag` of bun, unshare, GNU
 * parallel, npm …), by owner; a flag of a script of bench/ is found in its
 * source instead. A spoolctl flag is checked against the definitions.
 */
const FOREIGN_FLAGS: Record<string, string[]> = {
  bun: [
    "shard",
    "frozen-lockfile",
    "bytecode",
    "format",
    "target",
    "packages",
    "outdir",
    "compile",
    "preload",
    "cpu-prof",
    "cpu-prof-dir",
    "cpu-prof-interval",
    "timeout",
  ],
  unshare: ["pid", "fork", "mount-proc", "uts", "kill-child"],
  "GNU parallel and task-spooler": ["halt", "joblog", "line-buffer", "retry-failed", "jobs", "max-load"],
  git: ["detach"],
  tsc: ["noEmit"],
  "typos shown as refused": ["limt", "lim"],
};

describe("flags in the docs", () => {
  test("every flag after `spoolctl VERB` is one of that verb's flags, and every other is a known program's", async () => {
    const catalog = await loadCatalog();
    const byVerb = new Map<string, Set<string>>();
    // `worker start --count N` is QueueCTL's spelling, rewritten to `work --concurrency N`.
    const anyVerb = new Set<string>([...Object.keys(COMMON_FLAGS), "help", "version", "no-color", "count"]);
    for (const { spec } of catalog.verbs) {
      const own = new Set<string>(Object.keys(COMMON_FLAGS));
      for (const [name, def] of Object.entries(spec.flags ?? {})) {
        if ((def as { type: string }).type === "positional") continue;
        own.add(name);
        anyVerb.add(name);
      }
      byVerb.set(spec.name, own);
    }
    const verbOf = (first: string, second: string | undefined) => {
      const group = Object.hasOwn(COMPOUND, first) ? COMPOUND[first]! : undefined;
      if (group && second && Object.hasOwn(group, second)) return group[second]!([])[0]!;
      return byVerb.has(first) ? first : undefined;
    };
    const foreign = new Set(Object.values(FOREIGN_FLAGS).flat());
    const wrong: string[] = [];
    for (const doc of DOCS) {
      const text = read(doc);
      // Commands live in backtick spans and in code blocks (a line, less its comment).
      const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
      for (const block of text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm))
        spans.push(...block[1]!.split("\n").map((l) => l.replace(/\s{2,}#.*$/, "")));
      for (const span of spans) {
        for (const m of span.matchAll(/\bspoolctl\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?([^|;&`]*)/g)) {
          const verb = verbOf(m[1]!, m[2]);
          if (!verb) continue;
          const tail = `${m[2] ?? ""}${m[3]}`;
          const own = tail.split(/\s--\s/)[0]!; // a job's command follows a bare --
          for (const f of own.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g))
            if (!byVerb.get(verb)!.has(f[1]!) && !foreign.has(f[1]!))
              wrong.push(`${doc}: spoolctl ${verb} has no --${f[1]} (in "${span.trim()}")`);
        }
      }
      // A job's command after a bare `--` is the job's business, not ours.
      const ours = text.replace(/(\bspoolctl\b[^\n`]*?)\s--\s[^\n`]*/g, "$1");
      for (const f of ours.matchAll(/(?<![\w-])--([a-zA-Z][\w-]*)/g)) {
        const name = f[1]!;
        if (anyVerb.has(name) || foreign.has(name) || name.startsWith("no-")) continue;
        if (![`"--${name}"`, `--${name}=`, `'--${name}'`].some((form) => CODE_TEXT.includes(form)))
          wrong.push(
            `${at(doc, ours, f.index)}: --${name} is no flag of spoolctl, of a script of bench/ or test/, or of a listed program`,
          );
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});

describe("runnable README blocks", () => {
  const blocks = DOCS.flatMap((doc) =>
    [...read(doc).matchAll(/^```sh runnable\n([\s\S]*?)^```/gm)].map((m) => ({
      where: at(doc, read(doc), m.index),
      body: m[1]!,
    })),
  );

  test("some blocks are marked runnable", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  for (const block of blocks) {
    test(`${block.where} runs as written, each command with the exit code its comment gives`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "spoolctl-readme-"));
      try {
        // Each top-level `spoolctl` line is checked against "exit N" in its comment (0 when none).
        const script = block.body
          .replace(/\\\n\s*/g, " ")
          .split("\n")
          .map((line) => {
            if (!line.startsWith("spoolctl ")) return line;
            const want = Number(/\s{2,}#.*\bexit (\d+)\b/.exec(line)?.[1] ?? 0);
            return `${line}\n__check $? ${want} ${JSON.stringify(line.replace(/\s{2,}#.*$/, ""))}`;
          })
          .join("\n");
        const prelude = [
          `spoolctl() { bun ${JSON.stringify(CLI)} "$@"; }`,
          '__check() { if [ "$1" != "$2" ]; then echo "README-CHECK: exit $1, not $2: $3" >&2; exit 99; fi; }',
        ].join("\n");
        const p = Bun.spawn(["bash", "-c", `${prelude}\n${script}`], {
          cwd: dir,
          env: { ...process.env, HOME: dir, TMPDIR: dir, SPOOLCTL_DB: join(dir, "queue.db"), NO_COLOR: "1" },
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        });
        const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
        expect(stderr).not.toContain("README-CHECK");
        expect(stderr).not.toContain("INTERNAL");
        expect(code).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);
  }
});
