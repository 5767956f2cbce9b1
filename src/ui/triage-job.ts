/**
 * Triage of single jobs (docs/architecture.md "Triage"): one card per dead
 * or canceled job and its action menu (arrow keys and Enter, or one key),
 * walked one by one; the overrides prompt shared with the group actions; and
 * "view the full output" through the pager.
 */
import * as p from "@clack/prompts";
import { SpoolError } from "../contract/errors.ts";
import { TAIL_BYTES } from "../ops/feedback.ts";
import { parseRetryOverrides, type RetryOverrides } from "../ops/job-spec.ts";
import type { TriageCard } from "../ops/triage.ts";
import { counted, timeoutText } from "../ops/values.ts";
import type { Store } from "../store/store.ts";
import { deleteJob } from "../store/verbs/delete.ts";
import { retryJobs, retryWithOverrides } from "../store/verbs/retry.ts";
import { latestOutput, triageCard } from "../store/verbs/triage.ts";
import { menu } from "./menu.ts";
import { pagerCommand, runPager } from "./pager.ts";
import { cardText, cardTitle, describeChanges, noteLanes, outputText, type TriageSummary } from "./triage-card.ts";
import { ask, askOrBack, BACK, Back, validator } from "./triage-prompt.ts";

/** Bytes of each stream's tail read for a card (the card then shows its last lines). */
const CARD_TAIL_BYTES = TAIL_BYTES.default;
/** The "view" action shows at most this much of each stream, like `spoolctl output`. */
const VIEW_MAX_BYTES = 1024 * 1024;

/** Room inside a card or group box: the terminal's width less the box's frame, at least 40 columns. */
export function boxWidth(): number {
  return Math.max(40, (process.stdout.columns || 80) - 8);
}

/** What an overrides prompt is about: whom it names and what the settings are now. */
export interface OverrideSubject {
  /** e.g. `job 7`, `the 12 jobs of this group`. */
  what: string;
  timeout: string;
  budget: string;
  /** e.g. `it has KEEP`; "" when there is nothing to say. */
  envNote: string;
}

/** Asks for the overrides of a "retry with …" action; null = back to the menu (empty answer or Esc). */
export async function askOverrides(kind: "t" | "b" | "e", subject: OverrideSubject): Promise<RetryOverrides | null> {
  try {
    if (kind === "t") {
      const raw = await ask(
        p.text({
          message: `New timeout for ${subject.what} (now ${subject.timeout}), e.g. 90s, 10m, 2h — empty: back`,
          validate: validator((v) => parseRetryOverrides({ timeout: v })),
        }),
      );
      return raw.trim() ? parseRetryOverrides({ timeout: raw.trim() }) : null;
    }
    if (kind === "b") {
      const raw = await ask(
        p.text({
          message: `New retry budget for ${subject.what} (now ${subject.budget}), 0-1000 — empty: back`,
          validate: validator((v) => parseRetryOverrides({ maxRetries: v })),
        }),
      );
      return raw.trim() ? parseRetryOverrides({ maxRetries: raw.trim() }) : null;
    }
    // One K=V per answer, so a value may hold spaces; an empty answer ends the list.
    const pairs: string[] = [];
    for (;;) {
      const first = pairs.length === 0;
      const message = first
        ? `Variable to set for ${subject.what}, K=V${subject.envNote ? ` (${subject.envNote})` : ""} — empty: back`
        : `Another variable, K=V (set so far: ${pairs.map((kv) => kv.slice(0, kv.indexOf("="))).join(", ")}) — empty: retry now`;
      const raw = await ask(p.text({ message, validate: validator((v) => parseRetryOverrides({ env: [v] })) }));
      if (!raw.trim()) return first ? null : parseRetryOverrides({ env: pairs });
      pairs.push(raw.trim());
    }
  } catch (error) {
    if (error instanceof Back) return null;
    throw error;
  }
}

/**
 * Shows `text` through the pager on a terminal (`$PAGER`, else `less -R`),
 * or inline when there is none or it could not start.
 */
async function showLong(text: string): Promise<void> {
  const command = pagerCommand();
  if (command !== null && (await runPager(command, text))) return;
  p.log.message(text);
}

/** Puts the queue selection (--db X) into a text's suggested commands (src/commands/selection.ts). */
export type Suggest = (text: string) => string;

/** How leaving a job's menu continues the walk. */
export type JobOutcome = "next" | "back" | "quit";

/** Shows one job's menu until the person moves on (the card is already on screen). */
async function triageOne(
  store: Store,
  card: TriageCard,
  summary: TriageSummary,
  suggest: Suggest,
): Promise<JobOutcome> {
  const id = card.job.id;
  for (;;) {
    const action = await askOrBack(
      // Skip comes first: the cursor starts there, and "skip" is what a stray Enter should mean.
      menu(`Job ${id}: what now?`, [
        { value: "s", key: "s", label: "skip" },
        { value: "r", key: "r", label: "retry", hint: "requeue with a fresh budget" },
        {
          value: "t",
          key: "t",
          label: "retry with a new timeout",
          hint: `now ${timeoutText(card.job.timeout_seconds)}`,
        },
        { value: "b", key: "b", label: "retry with a new retry budget", hint: `now ${card.job.max_retries}` },
        { value: "e", key: "e", label: "retry with changed env (K=V)" },
        { value: "d", key: "d", label: "delete", hint: "the job, its history and output files" },
        { value: "v", key: "v", label: "view the full output", hint: "in $PAGER or less" },
        { value: "q", key: "q", label: "quit" },
      ]),
    );
    if (action === BACK) return "back";
    try {
      switch (action) {
        case "r": {
          await retryJobs(store, { refs: [String(id)] }, { force: false });
          summary.steps.push({ kind: "job", job_id: id, action: "retried" });
          noteLanes(summary, [card.job.queue]);
          p.log.success(`Retried job ${id}; now queued`);
          return "next";
        }
        case "t":
        case "b":
        case "e": {
          const keys = Object.keys(card.job.env);
          const overrides = await askOverrides(action, {
            what: `job ${id}`,
            timeout: timeoutText(card.job.timeout_seconds),
            budget: String(card.job.max_retries),
            envNote: keys.length ? `it has ${keys.join(", ")}` : "",
          });
          if (!overrides) continue;
          const [done] = await retryWithOverrides(store, [String(id)], overrides);
          summary.steps.push({ kind: "job", job_id: id, action: "retried", changed: done!.changed });
          noteLanes(summary, [card.job.queue]);
          p.log.success(`Retried job ${id} (${describeChanges(done!.changed)}); now queued`);
          return "next";
        }
        case "d": {
          const sure = await askOrBack(
            p.confirm({
              message: `Delete job ${id}, its ${counted(card.job.last_attempt_no, "attempt")}, events and output files? This cannot be undone.`,
              initialValue: false,
            }),
          );
          if (sure !== true) continue; // no, or Esc: back to the menu
          const gone = await deleteJob(store, String(id));
          summary.steps.push({ kind: "job", job_id: id, action: "deleted" });
          p.log.success(
            `Deleted job ${id} (${counted(gone.deleted_attempts, "attempt")}, ${counted(gone.deleted_events, "event")}, ${counted(gone.freed_bytes, "byte")} of output)`,
          );
          for (const w of gone.warnings) p.log.warn(w.message);
          return "next";
        }
        case "v":
          await showLong(suggest(outputText(await latestOutput(store, id, VIEW_MAX_BYTES), id)));
          continue;
        case "s":
          summary.steps.push({ kind: "job", job_id: id, action: "skipped" });
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
 * Walks the jobs `ids` one card at a time, in order. Returns "back" when the
 * person pressed Esc at a job's menu, "quit" for quit, else "next" at the end.
 */
export async function walkJobs(
  store: Store,
  ids: number[],
  summary: TriageSummary,
  suggest: Suggest,
): Promise<JobOutcome> {
  for (const [index, id] of ids.entries()) {
    const card = await triageCard(store, id, CARD_TAIL_BYTES);
    if (!card) continue; // retried, deleted or changed by someone else since the list was read
    summary.looked_at++;
    p.note(cardText(card, boxWidth()), cardTitle(card, index, ids.length));
    const outcome = await triageOne(store, card, summary, suggest);
    if (outcome !== "next") return outcome;
  }
  return "next";
}
