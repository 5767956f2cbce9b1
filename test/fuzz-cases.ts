/**
 * The argv generator of the fuzz test (issue 4): random argv lists over every
 * verb (the registry's verbs, the two-word forms and garbage verb names) and
 * each verb's own flag definitions, with good, boundary, bad and garbage
 * values. Deterministic for a seed. The safety rules at the end keep out the
 * modes that legitimately never end or are not envelopes (--follow, --watch,
 * a `work` loop, an unbounded `wait` / `stop --wait` / `events --wait`, a
 * server: `ui` and `metrics --serve` get an address of no machine, so a case
 * that passes every check ends in the bind's clear error).
 */

import { COMPOUND } from "../src/commands/names.ts";
import { VERBS } from "../src/commands/registry.ts";
import type { FlagDef, FlagsDef } from "../src/contract/flags.ts";

/** A small, fast, seedable PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One generated case. `work` marks a case whose queue the runner must swap for a tiny fresh one. */
export interface FuzzCase {
  n: number;
  argv: string[];
  work: boolean;
}

/** Verbs with their flag definitions (loaded from the registry). */
export type VerbFlags = Record<string, FlagsDef>;

/** Loads every registered verb's flag definitions. */
export async function loadVerbFlags(): Promise<VerbFlags> {
  const out: VerbFlags = {};
  for (const [name, entry] of Object.entries(VERBS)) out[name] = (await entry.load()).flags;
  return out;
}

// --- value pools -----------------------------------------------------------

const GARBAGE = [
  "",
  " ",
  "  \t",
  "\n",
  "\u0000",
  "a\u0000b",
  "\u0007",
  "\u001b[31mred\u001b[0m",
  "\r\n",
  "\u202eevil",
  "\ufeff",
  "\ud800",
  "日本語",
  "🙂",
  "Ω≈ç√",
  "ｆｕｌｌ",
  "-",
  "--",
  "---",
  "-=",
  "--=",
  "=",
  "==",
  "'",
  '"',
  "\\",
  "`",
  "$(true)",
  "${HOME}",
  "%s%n%x",
  "null",
  "undefined",
  "true",
  "false",
  "NaN",
  "Infinity",
  "-Infinity",
  "[]",
  "{}",
  '{"a":1}',
  "[1,2]",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "x".repeat(300),
  "y".repeat(5000),
  "../",
  "./",
  "~",
  "*",
  "?",
  "%",
  "#",
  "&",
  ";",
  "|",
];

const NUMBERS = [
  "0",
  "1",
  "2",
  "-1",
  "-0",
  "+1",
  "+0",
  "00",
  "007",
  "1.5",
  "0.5",
  ".5",
  "5.",
  "1e3",
  "1E-3",
  "1e309",
  "-1e309",
  "0x10",
  "0b1",
  "0o7",
  "1_000",
  "1,000",
  "１２",
  "٣",
  "NaN",
  "Infinity",
  "-Infinity",
  "9007199254740991",
  "9007199254740992",
  "99999999999999999999",
  "2147483647",
  "2147483648",
  "-2147483648",
  "-2147483649",
  "4294967296",
  " 3 ",
  "3 ",
  "\t3",
  "3\n",
  "1/2",
  "e",
  "-",
  "",
];

const DURATIONS = [
  "0",
  "0s",
  "0.05",
  "0.1",
  "0.2s",
  "1",
  "30",
  "90s",
  "5m",
  "2h",
  "1d",
  "30d",
  "31d",
  "3650d",
  "3651d",
  "1w",
  "1y",
  "-1",
  "-1s",
  "1.5.3",
  " 5 ",
  "5 s",
  "s",
  "m",
  "1S",
  "1M",
  "1H",
  "1D",
  ".5s",
  "5.s",
  "1e3",
  "1e309",
  "NaN",
  "Infinity",
  "PT5M",
  "1h30m",
  "",
];

const TIMES = [
  "0",
  "1",
  "1700000000",
  "1700000000.5",
  "99999999999",
  "2026-12-01T09:00:00Z",
  "2026-12-01",
  "2026-12-01 09:00",
  "2026-12-01T09:00:00+01:00",
  "2026-12-01T09:00:00-0530",
  "2026-02-30T00:00:00Z",
  "2026-02-29",
  "2028-02-29T00:00:00Z",
  "2026-13-01",
  "2026-00-10",
  "2026-12-01T24:00:00Z",
  "2026-12-01T09:60:00Z",
  "2026-03-29T02:30:00",
  "2026-10-25T01:30:00",
  "9999-12-31T23:59:59Z",
  "10000-01-01",
  "-1",
  "yesterday",
  "now",
  "",
];

const LANES = [
  "default",
  "builds",
  "once",
  "a",
  "A.b_c-d",
  "x".repeat(64),
  "x".repeat(65),
  "bad lane",
  ".hidden",
  "-dash",
  "_u",
  "日本",
  "a/b",
  "",
  " ",
];

const PAIRS = [
  "team=a",
  "k=v",
  "a=",
  "=b",
  "=",
  "a",
  "a=b=c",
  "ci=1",
  "日本=値",
  "k=\u0000",
  "k\u0000=v",
  `k=${"v".repeat(300)}`,
  `${"k".repeat(65)}=v`,
  "__proto__=x",
  "constructor=y",
  "toString=z",
  "PATH=/bin",
  "HOME=",
  "1=2",
  " =x",
  "k =v",
];

const IDS = [
  "1",
  "2",
  "3",
  "4",
  "5",
  "6",
  "7",
  "8",
  "9",
  "42",
  "0",
  "-1",
  "01",
  "1.0",
  "99999999999999999999",
  "9007199254740993",
  "k-done",
  "k-queued",
  "nope",
  "",
  " ",
];

const PATHS = [
  "out/r.xml",
  "r.md",
  "sub/dir/x.json",
  "jobs.ndjson",
  "missing.ndjson",
  "config.json",
  ".",
  "/",
  "-",
  "",
  "a\u0000b",
  "日本.md",
  "z".repeat(300),
  "/proc/self/nope/x",
  "junk.db",
  "newdir/q.db",
];

const JSONS = [
  '{"id":"fz1","command":"true"}',
  '{"id":"fz2","argv":["true"],"queue":"once"}',
  '{"id":"k-done","command":"echo other"}',
  '{"command":"true"}',
  '{"id":"12","command":"true"}',
  '{"id":"a","command":"true","colour":"red"}',
  '{"id":"a","command":"true","max_retries":-1}',
  '{"id":"a"}',
  '{"id":"__proto__","command":"true"}',
  '{"id":"c","command":"true","constructor":1}',
  '{"__proto__":{"x":1},"id":"p","command":"true"}',
  '{"id":"a","command":"true","timeout":"1e309"}',
  "{",
  "[]",
  "null",
  "1",
  '""',
  '{"id":"a","argv":[]}',
  '{"id":"a","argv":[1,2]}',
  '{"id":"a","command":""}',
];

const COMMANDS = ["true", "false", "echo", "hi", "exit 3", "sh", "-c", "--", "-", "", "日本"];

const SETTING_KEYS = [
  "max-retries",
  "max_retries",
  "timeout",
  "backoff-base",
  "backoff_base",
  "backoff-cap",
  "backoff_cap",
  "MAX_RETRIES",
  "colour",
  "__proto__",
  "constructor",
  "",
];

const GARBAGE_VERBS = [
  "",
  " ",
  "lsit",
  "ad",
  "ADD",
  "Status",
  "add\u0000",
  "日本",
  "triage",
  "robot-docs",
  "help",
  "version",
  "worker",
  "dlq",
  "config",
  "-",
  "--",
  "--json",
  "-x",
  "--version",
  "-v",
  "--help",
  "-h",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "config-",
  "x".repeat(500),
];

const UNKNOWN_FLAGS = [
  "--nope",
  "--limt",
  "--jsn",
  "--JSON",
  "--Json",
  "--db-path",
  "-z",
  "-",
  "--日本",
  "--\u0000",
  "--=x",
  "--constructor",
  "--__proto__",
  "--toString",
  "-J",
  "---json",
  "--json-x",
];

// --- generation -----------------------------------------------------------

/** Everything one case is made of: items are groups of tokens (a flag and its value), so rules can drop a flag with its value. */
interface Item {
  flag: string | null;
  tokens: string[];
}

function pick<T>(r: () => number, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)]!;
}

/** Sensible values, for the cases that should mostly succeed. */
const GOOD = {
  durations: ["0", "0.05", "1", "30", "90s", "5m", "2h", "1d"],
  times: ["1700000000", "2026-12-01T09:00:00Z", "2030-01-01"],
  lanes: ["default", "builds", "once"],
  pairs: ["team=a", "ci=1", "k=v"],
  ids: ["1", "2", "3", "4", "5", "6", "7", "8", "k-done", "k-queued"],
  paths: ["out/r.xml", "r.md", "sub/dir/x.json", "jobs.ndjson", "config.json"],
  json: [
    '{"id":"fz1","command":"true"}',
    '{"id":"fz2","argv":["true"],"queue":"once"}',
    '{"id":"fz3","command":"echo hi","max_retries":1,"tags":{"a":"b"}}',
  ],
};

/** Values for a flag: good, boundary, bad and garbage (only good ones when `good`). */
function valueFor(r: () => number, name: string, def: FlagDef, good = false): string {
  const roll = good ? 0.2 + r() * 0.8 : r();
  if (roll < 0.12) return pick(r, GARBAGE);
  if (def.choices?.length && roll < 0.6) {
    const c = pick(r, def.choices);
    const v = r();
    return v < 0.7 ? c : v < 0.8 ? c.toUpperCase() : v < 0.9 ? `${c},${pick(r, def.choices)}` : ` ${c}`;
  }
  const hint = (def.valueHint ?? "").toUpperCase();
  const num = (min: number | undefined, max: number | undefined) => {
    if (good) {
      const lo = min ?? 0;
      const hi = Math.min(max ?? lo + 100, lo + 100);
      const v = r();
      return String(v < 0.3 ? lo : v < 0.4 ? hi : Math.round(lo + r() * (hi - lo)));
    }
    const v = r();
    if (v < 0.15 && min !== undefined) return String(min);
    if (v < 0.3 && max !== undefined) return String(max);
    if (v < 0.4 && min !== undefined) return String(min - 1);
    if (v < 0.5 && max !== undefined) return String(max + 1);
    if (v < 0.55 && min !== undefined) return String(min - 0.5);
    return pick(r, NUMBERS);
  };
  if (
    hint.includes("DURATION") ||
    def.valueType === "duration" ||
    name === "timeout" ||
    name.endsWith("-timeout") ||
    name === "older-than" ||
    name === "after"
  ) {
    return good ? pick(r, GOOD.durations) : r() < 0.3 ? num(def.min, def.max) : pick(r, DURATIONS);
  }
  if (hint.includes("TIME") && !hint.includes("DURATION")) return pick(r, good ? GOOD.times : TIMES);
  if (
    hint === "N" ||
    hint === "SECONDS" ||
    def.valueType === "integer" ||
    def.valueType === "number" ||
    name === "cursor" ||
    name === "since-id"
  )
    return num(def.min, def.max);
  if (hint === "NAME") return pick(r, good ? GOOD.lanes : LANES);
  if (hint === "K=V") return pick(r, good ? GOOD.pairs : PAIRS);
  if (hint.includes("PATH") || hint.includes("FILE") || hint === "DIR") return pick(r, good ? GOOD.paths : PATHS);
  if (hint === "ID")
    return pick(r, good ? ["w-1", "ci-1", "fz-bg"] : [...IDS, "w-1", "ci-1", "worker@host:1", "bad id"]);
  if (hint === "VERB") return pick(r, [...Object.keys(VERBS), "nope", ""]);
  if (hint === "STRING") return pick(r, COMMANDS);
  if (hint === "KEY") return pick(r, ["k-done", "k-queued", "fresh-key", "", "k".repeat(300), "日本"]);
  return good || r() < 0.5 ? pick(r, ["note", "a title", "hello world", "x"]) : pick(r, GARBAGE);
}

/** A positional for a verb: ids, shells, setting keys, JSON, commands, or garbage. */
function positionalFor(r: () => number, verb: string, good = false): string {
  if (!good && r() < 0.15) return pick(r, GARBAGE);
  switch (verb) {
    case "add":
      return pick(r, good ? ["true", "echo", "hi"] : COMMANDS);
    case "enqueue":
      return pick(r, good ? GOOD.json : JSONS);
    case "completion":
      return pick(r, good ? ["bash", "zsh", "fish"] : ["bash", "zsh", "fish", "powershell", "BASH", ""]);
    case "config-get":
    case "config-set":
    case "config-unset":
      if (good)
        return r() < 0.5
          ? pick(r, ["max-retries", "timeout", "backoff_base", "backoff-cap"])
          : pick(r, ["1", "2", "5", "30s"]);
      return r() < 0.5 ? pick(r, SETTING_KEYS) : pick(r, [...NUMBERS, ...DURATIONS]);
    case "config-validate":
      return pick(r, good ? GOOD.paths : PATHS);
    default:
      return pick(r, good ? GOOD.ids : IDS);
  }
}

function flagItem(r: () => number, name: string, def: FlagDef, good = false): Item {
  const long = `--${name}`;
  if (def.type === "boolean") {
    const v = r();
    if (good || v < 0.8) return { flag: name, tokens: [long] };
    return { flag: name, tokens: [`${long}=${pick(r, ["true", "false", "yes", "1", "", "TRUE"])}`] };
  }
  const value = valueFor(r, name, def, good);
  const v = good ? 0.1 + r() * 0.9 : r();
  if (def.alias && v < 0.2)
    return { flag: name, tokens: r() < 0.5 ? [`-${def.alias}`, value] : [`-${def.alias}${value}`] };
  if (def.optionalValue && v < 0.35) return { flag: name, tokens: [long] };
  if (v < 0.08) return { flag: name, tokens: [long] }; // the value is missing
  if (v < 0.3) return { flag: name, tokens: [`${long}=${value}`] };
  return { flag: name, tokens: [long, value] };
}

/** The verb words of a case: a registered verb, a two-word form (sometimes broken), or garbage. */
function pickVerb(r: () => number, verbs: VerbFlags): { words: string[]; verb: string | null } {
  const roll = r();
  if (roll < 0.08) return { words: [pick(r, GARBAGE_VERBS)], verb: null };
  if (roll < 0.22) {
    const group = pick(r, Object.keys(COMPOUND));
    const actions = Object.keys(COMPOUND[group]!);
    if (r() < 0.12)
      return { words: r() < 0.5 ? [group] : [group, pick(r, ["nope", "", "START", "lst", "--json"])], verb: null };
    const action = pick(r, actions);
    const target = COMPOUND[group]![action]!([])[0]!;
    return { words: [group, action], verb: target in verbs ? target : null };
  }
  const verb = pick(r, Object.keys(verbs));
  return { words: [verb], verb };
}

/** Applies the safety rules; returns the final argv (with --json before any bare --). */
function finish(
  r: () => number,
  words: string[],
  verb: string | null,
  items: Item[],
): { argv: string[]; work: boolean } {
  // Never a stream or a redrawing screen.
  let kept = items.filter(
    (it) => it.flag !== "follow" && it.flag !== "watch" && !it.tokens.some((t) => /^--(follow|watch)(=|$)/.test(t)),
  );
  const has = (flag: string) => kept.some((it) => it.flag === flag);
  const drop = (flag: string) => (kept = kept.filter((it) => it.flag !== flag));
  const isWork = verb === "work";
  if (isWork) {
    // A tiny fresh queue (the runner's), never the loop.
    drop("db");
    if (!has("once") && !has("drain"))
      kept.push({ flag: r() < 0.5 ? "once" : "drain", tokens: [r() < 0.5 ? "--once" : "--drain"] });
    for (const it of kept)
      if (it.flag === "once" || it.flag === "drain")
        it.tokens = it.tokens.map((t) => (/^--(once|drain)=false$/.test(t) ? t.replace("false", "true") : t));
    if (!kept.some((it) => it.tokens.some((t) => /^--(once|drain)(=true)?$/.test(t))))
      kept.push({ flag: "drain", tokens: ["--drain"] });
  }
  const small = () => pick(r, ["0", "0.05", "0.1", "0.2s"]);
  if (verb === "wait") {
    drop("timeout");
    kept.push({ flag: "timeout", tokens: ["--timeout", small()] });
  }
  if (verb === "stop" && has("wait")) {
    drop("timeout");
    kept.push({ flag: "timeout", tokens: [`--timeout=${small()}`] });
  }
  // 192.0.2.0/24 (TEST-NET-1) is no machine's: the bind fails after every other check.
  if (verb === "ui") {
    drop("host");
    kept.push({ flag: "host", tokens: ["--host", "192.0.2.1"] });
  }
  if (verb === "metrics" && has("serve")) {
    drop("serve");
    kept.push({ flag: "serve", tokens: ["--serve", "192.0.2.1:9"] });
  }
  if (verb === "events" && has("wait")) {
    drop("wait-timeout");
    kept.push({ flag: "wait-timeout", tokens: ["--wait-timeout", small()] });
  }
  // Shuffle the items a little: flags may come in any order.
  for (let i = kept.length - 1; i > 0; i--) {
    if (r() < 0.3) {
      const j = Math.floor(r() * (i + 1));
      [kept[i], kept[j]] = [kept[j]!, kept[i]!];
    }
  }
  // A bare `--` and what follows it always come last.
  // (A stray "--" token anywhere ends flag parsing too: its item moves to the end with them.)
  const ends = (it: Item) => it.flag === "--" || it.tokens.includes("--");
  const dashed = kept.filter(ends);
  const body = kept.filter((it) => !ends(it)).flatMap((it) => it.tokens);
  // A verb word "--" ends flag parsing at once: --json goes first then.
  const tokens =
    words[0] === "--"
      ? ["--json", ...words, ...body, ...dashed.flatMap((it) => it.tokens)]
      : [...words, ...body, "--json", ...dashed.flatMap((it) => it.tokens)];
  return { argv: tokens, work: isWork };
}

/** Generates `count` cases from `seed`. */
export function generateCases(seed: number, count: number, verbs: VerbFlags, start = 0): FuzzCase[] {
  const r = rng(seed);
  const all = Object.entries(verbs);
  const cases: FuzzCase[] = [];
  for (let n = start; n < start + count; n++) {
    const { words, verb } = pickVerb(r, verbs);
    const defs = verb ? verbs[verb]! : {};
    // --json is always added; given again it is only a repeated flag (kept for 3% of the picks).
    const flags = Object.entries(defs).filter(([n, d]) => d.type !== "positional" && (n !== "json" || r() < 0.03));
    const positional = Object.values(defs).some((d) => d.type === "positional");
    const items: Item[] = [];
    // About a third of the cases use only the verb's own flags with sensible values.
    const good = verb !== null && r() < 0.35;
    const size = r() < 0.1 ? 0 : 1 + Math.floor(r() * r() * 7);
    for (let i = 0; i < size; i++) {
      if (good) {
        if (flags.length && (!positional || r() < 0.6)) {
          const [name, def] = pick(r, flags);
          if (name !== "db" && name !== "help") items.push(flagItem(r, name, def, true));
        } else items.push({ flag: null, tokens: [positionalFor(r, verb!, true)] });
        continue;
      }
      const roll = r();
      if (roll < 0.55 && flags.length) {
        const [name, def] = pick(r, flags);
        items.push(flagItem(r, name, def));
      } else if (roll < 0.63) {
        items.push({ flag: "?", tokens: [pick(r, UNKNOWN_FLAGS), ...(r() < 0.5 ? [pick(r, IDS)] : [])] });
      } else if (roll < 0.71) {
        // A flag of another verb.
        const [, otherDefs] = pick(r, all);
        const other = Object.entries(otherDefs).filter(([, d]) => d.type !== "positional");
        if (other.length) {
          const [name, def] = pick(r, other);
          if (name !== "follow" && name !== "watch")
            items.push({ flag: defs[name] ? name : "?", tokens: flagItem(r, name, def).tokens });
        }
      } else if (roll < 0.86 || (positional && roll < 0.92)) {
        items.push({ flag: null, tokens: [verb ? positionalFor(r, verb) : pick(r, IDS)] });
      } else if (roll < 0.95) {
        items.push({
          flag: "--",
          tokens: [
            "--",
            ...Array.from({ length: Math.floor(r() * 3) }, () => (verb ? positionalFor(r, verb) : pick(r, GARBAGE))),
          ],
        });
      } else {
        items.push({ flag: null, tokens: ["-"] });
      }
    }
    // QueueCTL's `worker start --count N` (rewritten to --concurrency).
    if (words[0] === "worker" && words[1] === "start" && r() < 0.3)
      items.push({
        flag: "concurrency",
        tokens: r() < 0.5 ? ["--count", pick(r, NUMBERS)] : [`--count=${pick(r, NUMBERS)}`],
      });
    const { argv, work } = finish(r, words, verb, items);
    cases.push({ n, argv, work });
  }
  return cases;
}
