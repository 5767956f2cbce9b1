/**
 * The queue-wide settings (docs/architecture.md "Settings"): read one, read
 * all, set, unset, and the effective settings an add copies into its jobs.
 * Each is one transaction; what a key means, its bounds and its parsing are
 * in `src/ops/config.ts`.
 */

import { type QueueSettings, SETTING_KEYS, settingsFrom } from "../../model/settings.ts";
import { type SettingKey, type SettingView, settingView } from "../../ops/config.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader, Store } from "../store.ts";

/**
 * Every setting, its default where unset (docs/architecture.md "Settings"),
 * read inside the caller's transaction: one statement (a helper only verbs
 * import, e.g. `complete` on the worker's hot path).
 */
export async function readSettings(tx: StoreReader): Promise<QueueSettings> {
  return settingsFrom(await tx.listSettings());
}

/** One setting with its provenance (`config get`), one read snapshot (one statement). */
export async function settingOf(store: SnapshotReader, key: SettingKey): Promise<SettingView> {
  return store.read(async (tx) => settingView(key, await tx.getSetting(key)));
}

/** Every setting with its provenance (`config show`), in key order, one read snapshot (one statement). */
export async function allSettings(store: SnapshotReader): Promise<SettingView[]> {
  return store.read(async (tx) => {
    const set = await tx.listSettings();
    return SETTING_KEYS.map((key) => settingView(key, set[key] ?? null));
  });
}

/**
 * Sets setting `key` to `value` (`config set`; parsed and in bounds:
 * `parseSetting` of `src/ops/config.ts`), one write transaction: reads the value it replaces, then
 * upserts the row; the answer is the setting as now stored, with `previous`.
 * Last writer wins (no guard needed: one row, one statement). Writes no ledger
 * row; wakes no worker (workers read settings when they need them).
 */
export async function setSetting(
  store: Store,
  { key, value }: { key: SettingKey; value: number },
): Promise<SettingView & { previous: number }> {
  return await store.write(async (tx) => {
    const previous = settingView(key, await tx.getSetting(key)).value;
    await tx.setSetting(key, JSON.stringify(value));
    return { ...settingView(key, await tx.getSetting(key)), previous };
  });
}

/**
 * Removes setting `key` (`config unset`), so its default applies again: one
 * write transaction, one DELETE; `removed` says whether it was set. Writes no
 * ledger row; wakes no worker.
 */
export async function unsetSetting(store: Store, key: SettingKey): Promise<SettingView & { removed: boolean }> {
  return await store.write(async (tx) => {
    const removed = await tx.deleteSetting(key);
    return { ...settingView(key, await tx.getSetting(key)), removed };
  });
}
