/**
 * What a verb is: its flags (one definition drives parsing, `--help` and later
 * `capabilities`), its operation call, and its text rendering. JSON rendering is
 * the same result object in an envelope (SPEC §2 "Commands are thin").
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { FlagsDef, ParsedFlags } from "../contract/flags.ts";
import { resolveLocation, type QueueLocation } from "../store/location.ts";
import { openAppearing, openQueue, type AppearingQueue, type Store } from "../store/index.ts";

/** Flags every queue-reading verb takes. */
export const COMMON_FLAGS = {
  db: { type: "string", description: "queue database path (default: $SPOOLCTL_DB, .spoolctl/config.json db_path, ./.spoolctl/queue.db)", valueHint: "PATH" },
  json: { type: "boolean", description: "print one JSON envelope on stdout" },
} as const satisfies FlagsDef;

/** What a verb's `run` receives. */
export interface VerbContext {
  flags: ParsedFlags;
  json: boolean;
  /** Resolves `--db` and friends (SPEC §4). */
  location(): QueueLocation;
  /**
   * Opens the queue. `create: false`: a missing file reads as an empty queue
   * and nothing is created. A verb whose `mutates` is false gets a read-only
   * connection. Closed by the runner.
   */
  open(opts: { create: boolean }): Promise<Store>;
  /** Opens the queue for a reader that waits: it reads as empty until a writer creates it. Closed by the runner. */
  openAppearing(): Promise<AppearingQueue>;
  /** Whether stdin and stdout are terminals (interactive pickers, progress). */
  interactive: boolean;
}

/** A verb of the CLI. */
export interface Verb<T = unknown> {
  name: string;
  /** Other names that reach this verb (QueueCTL spellings). */
  aliases?: string[];
  description: string;
  /** Usage lines shown under `--help`. */
  examples: string[];
  flags: FlagsDef;
  /**
   * Whether the verb may change the queue (published by `capabilities`). A verb
   * without it opens the queue read-only, so a verb that writes must say so.
   */
  mutates?: boolean;
  run(ctx: VerbContext): Promise<VerbResult<T>> | VerbResult<T>;
  /** Human text for stdout (empty string: print nothing). */
  render(result: VerbResult<T>, ctx: VerbContext): string;
}

/** Identity helper that keeps a verb's result type. */
export function defineVerb<T>(verb: Verb<T>): Verb<T> {
  return verb;
}

/**
 * Builds a {@link VerbContext}; `stores` collects opened stores for closing.
 * `mutates` is the verb's flag: when false, the queue is opened read-only.
 */
export function makeContext(flags: ParsedFlags, stores: Store[], mutates = true): VerbContext {
  let location: QueueLocation | null = null;
  const ctx: VerbContext = {
    flags,
    json: flags.values.json === true,
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    location() {
      location ??= resolveLocation(typeof flags.values.db === "string" ? flags.values.db : undefined);
      return location;
    },
    async open(opts) {
      // Reading verbs never write, so they work on a queue the user may only read (and never change it).
      const store = await openQueue(ctx.location(), { create: opts.create, readOnly: !mutates && !opts.create });
      stores.push(store);
      return store;
    },
    openAppearing() {
      return openAppearing(ctx.location(), (store) => stores.push(store));
    },
  };
  return ctx;
}

/** A string flag's value, or undefined. */
export function str(flags: ParsedFlags, name: string): string | undefined {
  const v = flags.values[name];
  return typeof v === "string" ? v : undefined;
}

/** A repeatable flag's values ([] when absent). */
export function list(flags: ParsedFlags, name: string): string[] {
  const v = flags.values[name];
  return Array.isArray(v) ? v : [];
}

/** A boolean flag. */
export function bool(flags: ParsedFlags, name: string): boolean {
  return flags.values[name] === true;
}
