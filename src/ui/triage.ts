/**
 * The `spoolctl triage` flow, on @clack/prompts: one card per dead
 * (then canceled) job and a one-key action menu. Every change goes through an
 * operation of src/ops (retry, retry with overrides, delete) that runs in one
 * transaction, and only after the person's last answer for it: Ctrl-C or Esc at
 * any prompt therefore leaves the job on screen exactly as it was.
 */
import * as p from "@clack/prompts";
import { SpoolError } from "../contract/errors.ts";
import { deleteJob } from "../ops/delete.ts";
import { TAIL_BYTES } from "../ops/feedback.ts";
import { parseRetryOverrides, retryJobs, retryWithOverrides, type RetryOverrides } from "../ops/retry.ts";
import { jobsInStates, latestOutput, triageCard, TRIAGE_STATES, type JobScope, type TriageCard } from "../ops/triage.ts";
import type { Store } from "../store/store.ts";
import { cardText, cardTitle, describeChanges, nextStep, outputText, summaryText, type TriageSummary } from "./triage-card.ts";

/** Thrown when a prompt is canceled (Ctrl-C or Esc): the session ends, changing nothing more. */
class Interrupted extends Error {}

/** Awaits a prompt; a cancel becomes {@link Interrupted}. */
async function ask<T>(prompt: Promise<T>): Promise<Exclude<T, symbol>> {
  const value = await prompt;
  if (p.isCancel(value)) throw new Interrupted();
  return value as Exclude<T, symbol>;
}

/** A prompt validator from a parser: its INVALID_INPUT message, shown under the field. */
function validator(parse: (v: string) => unknown): (v: string | undefined) => string | undefined {
  return (v) => {
    if (!v || v.trim() === "") return undefined; // empty = back to the menu
    try {
      parse(v.trim());
      return undefined;
    } catch (error) {
      return error instanceof SpoolError ? error.message : String(error);
    }
  };
}

/** Bytes of each stream's tail read for a card (the card then shows its last lines). */
const CARD_TAIL_BYTES = TAIL_BYTES.default;
/** The "view" action shows at most this much of each stream, like `spoolctl output`. */
const VIEW_MAX_BYTES = 1024 * 1024;

type Outcome = "next" | "quit";

/** Asks for the overrides of a "retry with …" action; null = back to the menu (empty answer). */
async function askOverrides(kind: "t" | "b" | "e", card: TriageCard): Promise<RetryOverrides | null> {
  const job = card.job;
  if (kind === "t") {
    const raw = await ask(p.text({ message: `New timeout for job ${job.id} (now ${job.timeout_seconds}s), e.g. 90s, 10m, 2h — empty: back`, validate: validator((v) => parseRetryOverrides({ timeout: v })) }));
    return raw.trim() ? parseRetryOverrides({ timeout: raw.trim() }) : null;
  }
  if (kind === "b") {
    const raw = await ask(p.text({ message: `New retry budget for job ${job.id} (now ${job.max_retries}), 0-1000 — empty: back`, validate: validator((v) => parseRetryOverrides({ maxRetries: v })) }));
    return raw.trim() ? parseRetryOverrides({ maxRetries: raw.trim() }) : null;
  }
  // One K=V per answer, so a value may hold spaces; an empty answer ends the list.
  const pairs: string[] = [];
  const keys = Object.keys(job.env);
  for (;;) {
    const first = pairs.length === 0;
    const message = first
      ? `Variable to set for job ${job.id}, K=V${keys.length ? ` (it has ${keys.join(", ")})` : ""} — empty: back`
      : `Another variable, K=V (set so far: ${pairs.map((kv) => kv.slice(0, kv.indexOf("="))).join(", ")}) — empty: retry now`;
    const raw = await ask(p.text({ message, validate: validator((v) => parseRetryOverrides({ env: [v] })) }));
    if (!raw.trim()) return first ? null : parseRetryOverrides({ env: pairs });
    pairs.push(raw.trim());
  }
}

/** Shows one job and runs its action menu until the person moves on. */
async function triageOne(store: Store, card: TriageCard, summary: TriageSummary, suggest: (text: string) => string): Promise<Outcome> {
  const id = card.job.id;
  for (;;) {
    const action = await ask(
      p.selectKey({
        message: `Job ${id}: what now?`,
        // Skip comes first: a canceled prompt echoes its first option, and "skip" is what Ctrl-C means for this job.
        options: [
          { value: "s", label: "skip" },
          { value: "r", label: "retry", hint: "requeue with a fresh budget" },
          { value: "t", label: "retry with a new timeout", hint: `now ${card.job.timeout_seconds}s` },
          { value: "b", label: "retry with a new retry budget", hint: `now ${card.job.max_retries}` },
          { value: "e", label: "retry with changed env (K=V)" },
          { value: "d", label: "delete", hint: "the job, its history and output files" },
          { value: "v", label: "view the full output" },
          { value: "q", label: "quit" },
        ],
      }),
    );
    try {
      switch (action) {
        case "r": {
          await retryJobs(store, { refs: [String(id)] }, { force: false });
          summary.retried.push({ job_id: id, changed: {} });
          p.log.success(`Retried job ${id}; now queued`);
          return "next";
        }
        case "t":
        case "b":
        case "e": {
          const overrides = await askOverrides(action, card);
          if (!overrides) continue;
          const done = await retryWithOverrides(store, String(id), overrides);
          summary.retried.push({ job_id: id, changed: done.changed });
          p.log.success(`Retried job ${id} (${describeChanges(done.changed)}); now queued`);
          return "next";
        }
        case "d": {
          const sure = await ask(p.confirm({ message: `Delete job ${id}, its ${card.job.last_attempt_no} attempt(s), events and output files? This cannot be undone.`, initialValue: false }));
          if (!sure) continue;
          const gone = await deleteJob(store, String(id));
          summary.deleted.push(id);
          p.log.success(`Deleted job ${id} (${gone.deleted_attempts} attempt(s), ${gone.deleted_events} event(s), ${gone.freed_bytes} bytes of output)`);
          for (const w of gone.warnings) p.log.warn(w.message);
          return "next";
        }
        case "v":
          p.log.message(suggest(outputText(await latestOutput(store, id, VIEW_MAX_BYTES), id)));
          continue;
        case "s":
          summary.skipped.push(id);
          return "next";
        default:
          return "quit";
      }
    } catch (error) {
      // Someone else changed the job meanwhile (CONFLICT), or the queue stayed locked:
      // the operation changed nothing; say so and move on.
      if (!(error instanceof SpoolError)) throw error;
      p.log.error(`${error.code}: ${error.message} — ${error.remediation}`);
      return "next";
    }
  }
}

/**
 * Runs a triage session over the dead, then canceled, jobs in `scope`, newest
 * first. Ends with a summary of what changed. Ctrl-C or Esc at any prompt ends
 * it at once (resolving, not throwing): the job on screen is left as it was.
 *
 * `suggest` puts the queue selection into the commands it suggests (the
 * verb's, src/commands/selection.ts).
 */
export async function runTriage(store: Store, scope: JobScope, scopeText: string, suggest: (text: string) => string = (t) => t): Promise<TriageSummary> {
  const jobs = await jobsInStates(store, TRIAGE_STATES, scope);
  const summary: TriageSummary = { looked_at: 0, listed: jobs.length, retried: [], deleted: [], skipped: [], interrupted: false };
  p.intro(`spoolctl triage${scopeText}`);
  if (jobs.length === 0) {
    p.outro(`Nothing to triage: no dead or canceled jobs${scopeText}.`);
    return summary;
  }
  const dead = jobs.filter((j) => j.state === "dead").length;
  p.log.info(`${dead} dead and ${jobs.length - dead} canceled job(s), newest first. Ctrl-C stops and leaves the job on screen as it is.`);
  // Outside a prompt the terminal is in cooked mode, where Ctrl-C is a signal: end as cleanly.
  const onSigint = () => {
    p.cancel("Interrupted.");
    process.exit(0);
  };
  process.on("SIGINT", onSigint);
  try {
    for (const [index, listed] of jobs.entries()) {
      const card = await triageCard(store, listed.id, CARD_TAIL_BYTES);
      if (!card) continue; // retried, deleted or changed by someone else since the list was read
      summary.looked_at++;
      const width = Math.max(40, (process.stdout.columns || 80) - 8);
      p.note(cardText(card, width), cardTitle(card, index, jobs.length));
      if ((await triageOne(store, card, summary, suggest)) === "quit") break;
    }
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    summary.interrupted = true;
  } finally {
    process.off("SIGINT", onSigint);
  }
  p.note(summaryText(summary), "What changed");
  if (summary.interrupted) p.cancel("Interrupted: the job on screen was left as it was.");
  else p.outro(suggest(nextStep(summary)));
  return summary;
}
