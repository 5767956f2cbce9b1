/**
 * What a verb is: its definition (flags and positionals: one definition drives
 * the parser, `--help`, `capabilities` and completion), its operation call,
 * and its text rendering. JSON rendering is the same result object in an
 * envelope (docs/contract.md "The envelope"). A verb stays thin: it receives
 * checked, typed values and calls `src/ops/`.
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { Warning } from "../contract/errors.ts";
import type { Args, FlagDef, FlagsDef, RawArgs, VerbSpec } from "../contract/flags.ts";
import { SOURCE_WORDS, withLocationSource } from "../ops/location-words.ts";
import { type AppearingQueue, openAppearing, openQueue, type Store } from "../store/index.ts";
import { type QueueLocation, resolveLocation, TRUSTED_DIRS_VAR, type UntrustedProjectDir } from "../store/location.ts";
import { ownerLabel } from "../store/ownership.ts";
import { isTerminal } from "../ui/stdio.ts";
import { suggesterFor } from "./selection.ts";

/** Flags every queue-reading verb takes. */
export const COMMON_FLAGS = {
  db: {
    type: "string",
    description: "queue database path (default: $SPOOLCTL_DB, .spoolctl/config.json db_path, ./.spoolctl/queue.db)",
    valueHint: "PATH",
    valueType: "path",
    hint: "write --db PATH",
  },
  json: { type: "boolean", description: "print one JSON envelope on stdout" },
} as const satisfies FlagsDef;

/** The job positional of `show`, `output` and `feedback`: one job id or idempotency key, named in `verb`'s messages. */
export function jobIdPositional(verb: string) {
  return {
    type: "positional",
    description: "job id, idempotency key, or last (the newest job)",
    valueHint: "ID",
    required: true,
    noun: "a job id",
    hint: `spoolctl ${verb} ID  (spoolctl list shows ids)`,
  } as const satisfies FlagDef;
}

/** Every verb with its summary, and the two-word forms: what the verbs that describe the CLI read. */
export interface Catalog {
  verbs: { spec: VerbSpec; summary: string }[];
  /** Two-word forms and what they run, e.g. `"dlq list": "list --state dead"`. */
  compound: Record<string, string>;
}

/** What a verb's `run` and `render` receive. */
export interface VerbContext<F extends FlagsDef = FlagsDef> {
  /** The flags and positionals, checked against the definitions and typed (defaults filled in). */
  args: Args<F>;
  /** The argv as typed, before checking: for "more" hints that repeat the command, and `add`, which hands it to the job-spec rules. */
  raw: RawArgs;
  /** Whether a flag was given on the command line (not merely defaulted). */
  given(name: keyof F & string): boolean;
  json: boolean;
  /** Whether stdin and stdout are terminals (interactive pickers, progress); asked on first read. */
  readonly interactive: boolean;
  /** Resolves `--db` and friends. */
  location(): QueueLocation;
  /** `text` (a hint naming spoolctl commands) with this command's queue selection in each command (src/commands/selection.ts). */
  suggest(text: string): string;
  /**
   * Opens the queue. `create: false`: a missing file reads as an empty queue
   * and nothing is created. A verb whose `mutates` is false gets a read-only
   * connection. Closed by the runner. `absentOk`: the verb reports a missing
   * queue itself (`doctor`), so no `NO_QUEUE` warning is added. `readOnly`
   * overrides `mutates` for this run (`wait` writes only with `--fail-fast`).
   * `overlapping`: the verb runs transactions at once (a worker), see openQueue.
   */
  open(opts: { create: boolean; absentOk?: boolean; readOnly?: boolean; overlapping?: boolean }): Promise<Store>;
  /** Opens the queue for a reader that waits: it reads as empty until a writer creates it. Closed by the runner. */
  openAppearing(): Promise<AppearingQueue>;
  /** Every verb, loaded (for `capabilities` and `completion`; passed in by the runner, which owns the registry). */
  catalog(): Promise<Catalog>;
}

/** A verb of the CLI: its definition, what it does, and how its result reads as text. */
export interface Verb<T = unknown, F extends FlagsDef = FlagsDef> extends VerbSpec<F> {
  run(ctx: VerbContext<F>): Promise<VerbResult<T>> | VerbResult<T>;
  /** Human text for stdout (empty string: print nothing). */
  render(result: VerbResult<T>, ctx: VerbContext<F>): string;
}

/** Any verb, as the registry holds it (its result type is the verb's own business). */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds verbs of every result type
export type AnyVerb = Verb<any, FlagsDef>;

/** Identity helper that infers a verb's flag definitions (for typed `ctx.args`) and its result type. */
export function defineVerb<T, const F extends FlagsDef>(verb: Verb<T, F>): Verb<T, F> {
  return verb;
}

/** Whether stdin and stdout are both terminals. */
export function terminalAttached(): boolean {
  return isTerminal(0) && isTerminal(1);
}

/** What {@link makeContext} needs besides the parsed argv. */
export interface ContextOptions {
  /** Collects opened stores, for the runner to close. */
  stores: Store[];
  /** The verb's `mutates`: when false, the queue is opened read-only. */
  mutates: boolean;
  /** Collects warnings about the queue itself (`NO_QUEUE`), for the runner to print with the result or the error. */
  warnings: Warning[];
  /** Loads every verb (the runner's registry). */
  catalog(): Promise<Catalog>;
}

/** Where a location came from, for messages. */
const FROM = SOURCE_WORDS;

/** The `NO_QUEUE` warning of a reader that found nothing at `location` (README "Where the queue lives"). */
function noQueue(location: QueueLocation): Warning {
  return {
    code: "NO_QUEUE",
    message: `no queue exists at ${location.dbPath} (${location.untrusted && location.source === "default" ? "the default: the .spoolctl/ folders above were passed over, see UNTRUSTED_FOLDER" : FROM[location.source]}), so it reads as empty; check the path, or start it: spoolctl add -- CMD ARGS…`,
  };
}

/**
 * The `UNTRUSTED_FOLDER` warning for a `.spoolctl/` passed over because another
 * user owns it (docs/architecture.md "Location"): who, and how to trust it.
 */
function untrustedWarning(u: UntrustedProjectDir): Warning {
  return {
    code: "UNTRUSTED_FOLDER",
    message: `ignoring ${u.path}: it is owned by ${ownerLabel(u.uid)}, not by you, so its settings could run another user's jobs as you; if you trust it, run with ${TRUSTED_DIRS_VAR}=${u.root} (folders separated by ':'), or pass --db`,
  };
}

/** Builds a {@link VerbContext} from checked `args` and the `raw` argv they came from. */
export function makeContext<F extends FlagsDef>(raw: RawArgs, args: Args<F>, opts: ContextOptions): VerbContext<F> {
  let location: QueueLocation | null = null;
  const ctx: VerbContext<F> = {
    args,
    raw,
    given: (name) => raw.values[name] !== undefined,
    json: raw.values.json === true,
    get interactive() {
      return terminalAttached();
    },
    location() {
      if (location === null) {
        location = resolveLocation(typeof raw.values.db === "string" ? raw.values.db : undefined);
        for (const w of (location.untrusted ?? []).map(untrustedWarning)) {
          // At once on a terminal's stderr (a worker runs long); in the envelope under --json.
          if (ctx.json) opts.warnings.push(w);
          else process.stderr.write(`spoolctl: warning: ${w.code}: ${w.message}\n`);
        }
      }
      return location;
    },
    suggest: suggesterFor(typeof raw.values.db === "string" ? raw.values.db : undefined),
    async open({ create, absentOk = false, readOnly: readOnlyAsked, overlapping }) {
      // Reading verbs never write, so they work on a queue the user may only read (and never change it).
      // A database that cannot be reached is named with where its URL came from (--db, SPOOLCTL_DB, config).
      const store = await openQueue(ctx.location(), {
        create,
        readOnly: (readOnlyAsked ?? !opts.mutates) && !create,
        overlapping,
      }).catch((error) => {
        throw withLocationSource(error, ctx.location());
      });
      opts.stores.push(store);
      if (!store.exists && !absentOk && !opts.warnings.some((w) => w.code === "NO_QUEUE"))
        opts.warnings.push(noQueue(ctx.location()));
      return store;
    },
    openAppearing() {
      let first = true;
      const appearing = openAppearing(ctx.location(), (store) => {
        opts.stores.push(store);
        // A reader that waits for the queue to appear still says it is not there yet.
        if (first && !store.exists) opts.warnings.push(noQueue(ctx.location()));
        first = false;
      });
      return appearing.catch((error) => {
        throw withLocationSource(error, ctx.location());
      });
    },
    catalog: opts.catalog,
  };
  return ctx;
}
