/**
 * The `spoolctl triage` session (docs/architecture.md "Triage"), on
 * @clack/prompts: first the failure groups of the dead (then canceled) jobs,
 * largest first; a group's actions (retry all, retry all with a new timeout,
 * retry budget or env, delete all, open it and walk its jobs, skip); and the
 * summary of everything done. One group skips the group screen, one job the
 * group's menu. Every change goes through an operation of src/ops in one
 * transaction, and only after the person's last answer for it: Ctrl-C at any
 * prompt ends the session and leaves the job or group on screen as it was;
 * Esc goes back one level: a card to its group's menu (or to the list when
 * it was opened from there), a group's menu to the list; only the list's Esc
 * ends the session.
 */
import * as p from "@clack/prompts";
import { SpoolError } from "../contract/errors.ts";
import { signatureKey } from "../ops/failure-signature.ts";
import type { RetryOverrides } from "../ops/job-spec.ts";
import { retryWarnings } from "../ops/retry.ts";
import { type JobScope, TRIAGE_STATES } from "../ops/triage.ts";
import type { FailureGroup } from "../ops/triage-groups.ts";
import { counted, timeoutText } from "../ops/values.ts";
import type { Store } from "../store/store.ts";
import { deleteJobs, deletionPreview } from "../store/verbs/delete.ts";
import { jobsByIds } from "../store/verbs/jobs.ts";
import { retryJobs, retryWithOverrides } from "../store/verbs/retry.ts";
import { failureGroups, jobsInStates } from "../store/verbs/triage.ts";
import { menu, watchCancelKeys } from "./menu.ts";
import { pagerRunning } from "./pager.ts";
import { columns } from "./text.ts";
import {
  byteText,
  type GroupAction,
  groupActionText,
  nextStep,
  noteLanes,
  summaryText,
  type TriageSummary,
} from "./triage-card.ts";
import { groupCardText, groupRow, groupTitle } from "./triage-groups-text.ts";
import { askOverrides, boxWidth, type Suggest, walkJobs } from "./triage-job.ts";
import { askOrBack, BACK, Interrupted } from "./triage-prompt.ts";

/** How leaving a group's menu continues the session. */
type GroupOutcome = "done" | "back" | "quit";

/** The range of a setting over a group's jobs: `300s`, or `60s-300s`. */
function range(values: number[], unit = ""): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? `${lo}${unit}` : `${lo}${unit}-${hi}${unit}`;
}

/** Asks yes/no; Esc (back) counts as no. */
async function confirm(message: string, initialValue: boolean): Promise<boolean> {
  return (await askOrBack(p.confirm({ message, initialValue }))) === true;
}

/** Retries every job of `g` (with `overrides` when given) after a confirm; false when the person backed out. */
async function retryGroup(
  store: Store,
  g: FailureGroup,
  overrides: RetryOverrides | null,
  summary: TriageSummary,
): Promise<boolean> {
  const how = overrides ? ` with ${overridesText(overrides)}` : "";
  if (
    !(await confirm(
      `Retry all ${counted(g.count, "job")} of this group${how}? They are requeued with a fresh retry budget.`,
      true,
    ))
  )
    return false;
  const refs = g.job_ids.map(String);
  let step: GroupAction;
  let warnings: { message: string }[] = [];
  if (overrides) {
    const done = await retryWithOverrides(store, refs, overrides);
    step = { signature: g.text, action: "retried", job_ids: done.map((d) => d.job_id), changed: done[0]?.changed };
  } else {
    // As `retry --all` (the group's jobs as its filter): of jobs sharing an idempotency key
    // only the newest is requeued, and a key an active job holds keeps its dead jobs dead.
    const done = await retryJobs(store, { filter: { ids: g.job_ids, states: ["dead", "canceled"] } }, { force: false });
    step = { signature: g.text, action: "retried", job_ids: done.jobs.map((d) => d.job_id) };
    warnings = retryWarnings(done);
  }
  summary.steps.push({ kind: "group", ...step });
  // The Next: hint drains the lanes the requeued jobs are in.
  noteLanes(
    summary,
    (await jobsByIds(store, step.job_ids)).map((j) => j.queue),
  );
  p.log.success(groupActionText(step));
  for (const w of warnings) p.log.warn(w.message);
  return true;
}

/** What overrides will set, for the confirm: `timeout 90s, retry budget 5, env FOO set`. */
function overridesText(o: RetryOverrides): string {
  const parts: string[] = [];
  if (o.timeoutSeconds !== undefined) parts.push(`timeout ${timeoutText(o.timeoutSeconds)}`);
  if (o.maxRetries !== undefined) parts.push(`retry budget ${o.maxRetries}`);
  if (o.env && Object.keys(o.env).length) parts.push(`env ${Object.keys(o.env).sort().join(", ")} set`);
  return parts.join(", ");
}

/** Deletes every job of `g` after a confirm that says what goes; false when the person backed out. */
async function deleteGroup(store: Store, g: FailureGroup, summary: TriageSummary): Promise<boolean> {
  const gone = await deletionPreview(store, g.job_ids);
  const sure = await confirm(
    `Delete all ${counted(gone.jobs, "job")} of this group with their history: ${counted(gone.attempts, "attempt")}, ${counted(gone.events, "event")} and ${byteText(gone.bytes)} of output? This cannot be undone.`,
    false,
  );
  if (!sure) return false;
  const done = await deleteJobs(store, g.job_ids.map(String));
  const step: GroupAction = {
    signature: g.text,
    action: "deleted",
    job_ids: done.job_ids,
    removed: { attempts: done.deleted_attempts, events: done.deleted_events, bytes: done.freed_bytes },
  };
  summary.steps.push({ kind: "group", ...step });
  p.log.success(groupActionText(step));
  for (const w of done.warnings) p.log.warn(w.message);
  return true;
}

/** The group of `key` as it is now (its jobs may have been retried or deleted meanwhile); null when none is left. */
async function regroup(store: Store, scope: JobScope, key: string): Promise<FailureGroup | null> {
  return (await failureGroups(store, scope)).find((x) => signatureKey(x.signature) === key) ?? null;
}

/** Shows a group's card and runs its menu until the group is handled, skipped, left (Esc) or the session quit. */
async function triageGroup(
  store: Store,
  scope: JobScope,
  g: FailureGroup,
  index: number,
  total: number,
  summary: TriageSummary,
  suggest: Suggest,
): Promise<GroupOutcome> {
  if (g.count === 1) {
    // One job: its card at once, no group menu; Esc there goes back to the list.
    const outcome = await walkJobs(store, g.job_ids, summary, suggest);
    return outcome === "next" ? "done" : outcome;
  }
  p.note(groupCardText(g, boxWidth()), groupTitle(g, index, total));
  for (;;) {
    const action = await askOrBack(
      menu(`Group of ${g.count} jobs: what now?`, [
        { value: "o", key: "o", label: "open the group: walk its jobs one by one", hint: "newest first" },
        { value: "r", key: "r", label: `retry all ${g.count}`, hint: "requeue with a fresh budget" },
        { value: "t", key: "t", label: `retry all ${g.count} with a new timeout` },
        { value: "b", key: "b", label: `retry all ${g.count} with a new retry budget` },
        { value: "e", key: "e", label: `retry all ${g.count} with changed env (K=V)` },
        { value: "d", key: "d", label: `delete all ${g.count}`, hint: "the jobs, their history and output files" },
        { value: "s", key: "s", label: "skip this group" },
        { value: "q", key: "q", label: "quit" },
      ]),
    );
    if (action === BACK) return "back";
    try {
      switch (action) {
        case "o": {
          const outcome = await walkJobs(store, g.job_ids, summary, suggest);
          if (outcome !== "back") return outcome === "quit" ? "quit" : "done"; // walked to the end
          // Esc on a card: this group's menu again, as the group is now (some of its jobs
          // may have been retried or deleted on the way); none left: back to the list.
          const now = await regroup(store, scope, signatureKey(g.signature));
          if (!now) return "done";
          g = now;
          p.note(groupCardText(g, boxWidth()), groupTitle(g, index, total));
          continue;
        }
        case "r":
          if (await retryGroup(store, g, null, summary)) return "done";
          continue;
        case "t":
        case "b":
        case "e": {
          const jobs = await jobsByIds(store, g.job_ids);
          const keys = [...new Set(jobs.flatMap((j) => Object.keys(j.env)))].sort();
          const overrides = await askOverrides(action, {
            what: `the ${g.count} jobs of this group`,
            timeout: range(
              jobs.map((j) => j.timeout_seconds),
              "s",
            ),
            budget: range(jobs.map((j) => j.max_retries)),
            envNote: keys.length ? `they have ${keys.join(", ")}` : "",
          });
          if (overrides && (await retryGroup(store, g, overrides, summary))) return "done";
          continue;
        }
        case "d":
          if (await deleteGroup(store, g, summary)) return "done";
          continue;
        case "s":
          summary.steps.push({ kind: "group", signature: g.text, action: "skipped", job_ids: g.job_ids });
          return "done";
        default:
          return "quit";
      }
    } catch (error) {
      // A job of the group changed meanwhile (CONFLICT: retried elsewhere, its key now
      // held by another job), or the queue stayed locked: nothing changed; say so.
      if (!(error instanceof SpoolError)) throw error;
      p.log.error(`${error.code}: ${error.message} — ${error.remediation}`);
    }
  }
}

/** The group screen: which group next (its index), "walk" for every job one by one, or "quit". */
async function pickGroup(groups: FailureGroup[], cursor: number): Promise<number | "walk" | "quit"> {
  const dead = groups.filter((g) => g.signature.state === "dead").reduce((n, g) => n + g.count, 0);
  const canceled = groups.reduce((n, g) => n + g.count, 0) - dead;
  // The menu draws "│  ● [1] " before a label and " (hint)" after it; one column spare, so no row wraps.
  const width = (process.stdout.columns || 80) - 10;
  const options = groups.map((g, i) => ({
    value: `g${i}`,
    key: i < 9 ? String(i + 1) : undefined,
    ...groupRow(g, width),
  }));
  options.push({ value: "w", key: "w", label: "walk every job one by one, newest first", hint: "" });
  options.push({ value: "q", key: "q", label: "quit", hint: "" });
  const chosen = await askOrBack(
    menu(
      `${dead} dead and ${counted(canceled, "canceled job")} in ${counted(groups.length, "group")}, largest first: pick one`,
      options,
      `g${Math.min(cursor, groups.length - 1)}`,
    ),
  );
  if (chosen === BACK) return "quit"; // Esc on the first screen: nothing above it
  if (chosen === "w" || chosen === "q") return chosen === "w" ? "walk" : "quit";
  return Number(chosen.slice(1));
}

/** Runs the group screen and the groups' menus until every group is handled or skipped, or the person quits. */
async function triageGroups(
  store: Store,
  scope: JobScope,
  first: FailureGroup[],
  summary: TriageSummary,
  suggest: Suggest,
): Promise<void> {
  const skipped = new Set<string>();
  let cursor = 0;
  let fresh: FailureGroup[] | null = first; // the first screen shows what the session started with
  let backToList = false;
  for (;;) {
    // After an action the groups are read again: jobs were requeued or deleted, here or elsewhere.
    const groups = (fresh ?? (await failureGroups(store, scope))).filter(
      (g) => !skipped.has(signatureKey(g.signature)),
    );
    fresh = null;
    if (groups.length === 0) return;
    // One group skips the list, unless Esc went back to it: then the list is shown even for
    // one group, so Esc always has a level to go back to and only the list's Esc ends.
    const direct = groups.length === 1 && !backToList;
    const picked = direct ? 0 : await pickGroup(groups, cursor);
    if (picked === "quit") return;
    if (picked === "walk") {
      // Every job once, as before groups: at the end every job was looked at; Esc: the list again.
      const jobs = await jobsInStates(store, TRIAGE_STATES, scope);
      if (
        (await walkJobs(
          store,
          jobs.map((j) => j.id),
          summary,
          suggest,
        )) === "back"
      )
        continue;
      return;
    }
    const g = groups[picked]!;
    const outcome = await triageGroup(store, scope, g, picked, groups.length, summary, suggest);
    if (outcome === "quit") return;
    // Handled, skipped or walked: not shown again (a retried or deleted group is gone anyway).
    // Left with Esc: the list again (even of one group), the cursor on it.
    if (outcome === "done") skipped.add(signatureKey(g.signature));
    else backToList = true;
    cursor = picked;
  }
}

/**
 * Runs a triage session over the dead, then canceled, jobs in `scope`. Ends
 * with a summary of everything done. Ctrl-C at any prompt ends it at once
 * (resolving, not throwing): the job or group on screen is left as it was.
 * `suggest` puts the queue selection into the commands it suggests (the
 * verb's, src/commands/selection.ts).
 */
export async function runTriage(
  store: Store,
  scope: JobScope,
  scopeText: string,
  suggest: Suggest = (t) => t,
): Promise<TriageSummary> {
  const groups = await failureGroups(store, scope);
  const listed = groups.reduce((n, g) => n + g.count, 0);
  const summary: TriageSummary = {
    looked_at: 0,
    listed,
    steps: [],
    lanes: [],
    interrupted: false,
  };
  p.intro(`spoolctl triage${scopeText}`);
  if (listed === 0) {
    p.outro(`Nothing to triage: no dead or canceled jobs${scopeText}.`);
    return summary;
  }
  const dead = groups.filter((g) => g.signature.state === "dead").reduce((n, g) => n + g.count, 0);
  const counts = `${dead} dead, ${counted(listed - dead, "canceled job")}, ${counted(groups.length, "failure group")}.`;
  const keys = "Esc: back · Ctrl-C: stop, changing nothing more";
  // One line where it fits ("●  " before it), else the keys on a line of their own.
  const fits = columns(`${counts} ${keys}`) + 3 < (process.stdout.columns || 80);
  p.log.info(fits ? `${counts} ${keys}` : `${counts}\n${keys}`);
  watchCancelKeys();
  // Outside a prompt the terminal is in cooked mode, where Ctrl-C is a signal: end as cleanly.
  const onSigint = () => {
    if (pagerRunning()) return; // the pager's Ctrl-C (the terminal sends it to the whole group)
    p.cancel("Interrupted.");
    process.exit(0);
  };
  process.on("SIGINT", onSigint);
  try {
    // One job is one group of one: its card at once, and Esc there shows the list.
    await triageGroups(store, scope, groups, summary, suggest);
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
