/**
 * The verb table: name → summary and lazy loader, so that a simple verb
 * imports only what it uses and the CLI starts fast (docs/architecture.md
 * "The house"); and the two-word QueueCTL commands, rewritten to verbs before
 * parsing.
 */
import { SpoolError } from "../contract/errors.ts";
import { closest } from "../contract/flags.ts";
import { VERB_SUMMARIES, type VerbName } from "./names.ts";
import type { AnyVerb } from "./verb.ts";

type Loader = () => Promise<AnyVerb>;

const LOADERS: Record<VerbName, Loader> = {
  add: async () => (await import("./add.ts")).default,
  work: async () => (await import("./work.ts")).default,
  status: async () => (await import("./status.ts")).default,
  list: async () => (await import("./list.ts")).default,
  show: async () => (await import("./show.ts")).default,
  workers: async () => (await import("./workers.ts")).default,
  stop: async () => (await import("./stop.ts")).default,
  output: async () => (await import("./output.ts")).default,
  wait: async () => (await import("./wait.ts")).default,
  feedback: async () => (await import("./feedback.ts")).default,
  retry: async () => (await import("./retry.ts")).default,
  rerun: async () => (await import("./rerun.ts")).default,
  cancel: async () => (await import("./cancel.ts")).default,
  hold: async () => (await import("./hold.ts")).hold,
  release: async () => (await import("./hold.ts")).release,
  edit: async () => (await import("./edit.ts")).edit,
  priority: async () => (await import("./edit.ts")).priority,
  triage: async () => (await import("./triage.ts")).default,
  delete: async () => (await import("./delete.ts")).default,
  pause: async () => (await import("./lane.ts")).pause,
  resume: async () => (await import("./lane.ts")).resume,
  "lane-list": async () => (await import("./lane.ts")).list,
  "lane-set": async () => (await import("./lane.ts")).set,
  prune: async () => (await import("./prune.ts")).default,
  events: async () => (await import("./events.ts")).default,
  "config-show": async () => (await import("./config.ts")).show,
  "config-validate": async () => (await import("./config.ts")).validate,
  "config-get": async () => (await import("./config.ts")).get,
  "config-set": async () => (await import("./config.ts")).set,
  "config-unset": async () => (await import("./config.ts")).unset,
  "schedule-add": async () => (await import("./schedule.ts")).add,
  "schedule-list": async () => (await import("./schedule.ts")).list,
  "schedule-rm": async () => (await import("./schedule.ts")).rm,
  "schedule-pause": async () => (await import("./schedule.ts")).pause,
  "schedule-resume": async () => (await import("./schedule.ts")).resume,
  "schedule-run-now": async () => (await import("./schedule.ts")).runNow,
  "schedule-tick": async () => (await import("./schedule.ts")).tick,
  "hook-add": async () => (await import("./hook.ts")).add,
  "hook-list": async () => (await import("./hook.ts")).list,
  "hook-rm": async () => (await import("./hook.ts")).rm,
  "batch-seal": async () => (await import("./batch.ts")).seal,
  "batch-show": async () => (await import("./batch.ts")).show,
  "batch-list": async () => (await import("./batch.ts")).list,
  doctor: async () => (await import("./doctor.ts")).default,
  capabilities: async () => (await import("./capabilities.ts")).default,
  schema: async () => (await import("./schema.ts")).default,
  brief: async () => (await import("./brief.ts")).default,
  enqueue: async () => (await import("./enqueue.ts")).default,
  report: async () => (await import("./report.ts")).default,
  metrics: async () => (await import("./metrics.ts")).default,
  ui: async () => (await import("./ui.ts")).default,
  completion: async () => (await import("./completion.ts")).default,
};

/** Verbs by name: the one-line summary of the root `--help` and the loader of the verb's module. */
export const VERBS: Record<string, { summary: string; load: Loader }> = Object.fromEntries(
  Object.entries(VERB_SUMMARIES).map(([name, summary]) => [name, { summary, load: LOADERS[name as VerbName] }]),
);

/** Loads verb `name`; `UNKNOWN_COMMAND` (with "did you mean") when there is none. */
export async function resolveVerb(name: string): Promise<AnyVerb> {
  // Own keys only: "constructor" or "__proto__" name no verb.
  const entry = Object.hasOwn(VERBS, name) ? VERBS[name] : undefined;
  if (!entry) {
    const guess = closest(name, Object.keys(VERBS));
    throw new SpoolError(
      "UNKNOWN_COMMAND",
      `unknown command ${JSON.stringify(name)}${guess ? ` (did you mean ${guess}?)` : ""}`,
      { did_you_mean: guess },
    );
  }
  return entry.load();
}
