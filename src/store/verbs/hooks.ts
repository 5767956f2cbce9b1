/**
 * The hook operations (docs/architecture.md "Hooks"): add, list, remove,
 * each one transaction; parsing what the user typed and the shape shown are
 * in `src/ops/hooks.ts`. Firing a hook is no verb of its own: the driver adds
 * its job in the transaction that ends a matching job (or batch).
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Hook, JobTemplate } from "../../model/recurring.ts";
import { settingsFrom } from "../../model/settings.ts";
import type { HookDraft } from "../../ops/hooks.ts";
import { toNewJob } from "../../ops/job-spec.ts";
import { nameTaken } from "../recurring.ts";
import type { SnapshotReader, Store } from "../store.ts";

/**
 * Stores hook `draft` (`hook add`), one write transaction: reads the queue
 * settings its job copies (as `add` does), then inserts the row. Guard: the
 * name's primary key; `CONFLICT` when it is taken (nothing changed). Writes
 * no ledger row; wakes no worker.
 */
export async function addHook(store: Store, draft: HookDraft): Promise<Hook> {
  const { spec, ...rest } = draft;
  return await store.write(async (tx) => {
    const settings = settingsFrom(await tx.listSettings());
    const { next_run_at: _due, idempotency_key: _key, ...job } = toNewJob(spec, settings, store.now());
    const hook: Hook = { ...rest, job: job as JobTemplate, created_at: store.now() };
    if (!(await tx.recurring.addHook(hook))) throw nameTaken("hook", hook.name);
    return hook;
  });
}

/** Every hook by name (`hook list`), one read snapshot. */
export async function listHooks(store: SnapshotReader): Promise<Hook[]> {
  return store.read(async (tx) => tx.recurring.listHooks());
}

/** Deletes hook `name` (`hook rm`; jobs it added stay), one write transaction, one DELETE. Raises `NOT_FOUND`. */
export async function removeHook(store: Store, name: string): Promise<void> {
  if (!(await store.write(async (tx) => tx.recurring.removeHook(name))))
    throw new SpoolError("NOT_FOUND", `no hook named ${name}`, {
      remediation: "spoolctl hook list shows the hooks",
      detail: { name },
    });
}
