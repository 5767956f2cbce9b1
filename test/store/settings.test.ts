/**
 * Queue-wide settings: raw JSON text by key (listSettings in one call,
 * getSetting, setSetting, deleteSetting).
 */
import { expect, test } from "bun:test";
import { openQueue } from "../../src/store/index.ts";
import { forEachDriver } from "../support/store.ts";

forEachDriver("settings", (q) => {
  test("a fresh queue has no settings", async () => {
    expect(await q.store.read(async (tx) => tx.listSettings())).toEqual({});
    expect(await q.store.read(async (tx) => tx.getSetting("max_retries"))).toBeNull();
  });

  test("setSetting stores raw JSON text; getSetting and listSettings read it back verbatim", async () => {
    await q.store.write(async (tx) => {
      await tx.setSetting("max_retries", "5");
      await tx.setSetting("timeout", "12.5");
      await tx.setSetting("note", '{"a":[1,"x"],"b":null}');
      await tx.setSetting("weird key ✓", '"text with \\"quotes\\""');
    });
    expect(await q.store.read(async (tx) => tx.getSetting("max_retries"))).toBe("5");
    expect(await q.store.read(async (tx) => tx.getSetting("note"))).toBe('{"a":[1,"x"],"b":null}');
    expect(await q.store.read(async (tx) => tx.listSettings())).toEqual({
      max_retries: "5",
      timeout: "12.5",
      note: '{"a":[1,"x"],"b":null}',
      "weird key ✓": '"text with \\"quotes\\""',
    });
  });

  test("setSetting overwrites; a write sees its own setting before commit", async () => {
    await q.store.write(async (tx) => tx.setSetting("backoff_base", "2"));
    const seen = await q.store.write(async (tx) => {
      await tx.setSetting("backoff_base", "3");
      return [await tx.getSetting("backoff_base"), (await tx.listSettings()).backoff_base];
    });
    expect(seen).toEqual(["3", "3"]);
    expect(await q.store.read(async (tx) => tx.listSettings())).toEqual({ backoff_base: "3" });
  });

  test("deleteSetting removes a setting and says whether it was set", async () => {
    await q.store.write(async (tx) => {
      await tx.setSetting("a", "1");
      await tx.setSetting("b", "2");
    });
    expect(await q.store.write(async (tx) => tx.deleteSetting("a"))).toBe(true);
    expect(await q.store.write(async (tx) => tx.deleteSetting("a"))).toBe(false);
    expect(await q.store.write(async (tx) => tx.deleteSetting("never"))).toBe(false);
    expect(await q.store.read(async (tx) => tx.getSetting("a"))).toBeNull();
    expect(await q.store.read(async (tx) => tx.listSettings())).toEqual({ b: "2" });
    // Set again after a delete.
    await q.store.write(async (tx) => tx.setSetting("a", "10"));
    expect(await q.store.read(async (tx) => tx.getSetting("a"))).toBe("10");
  });

  test("settings are queue-wide: another connection sees them", async () => {
    await q.store.write(async (tx) => tx.setSetting("timeout", "60"));
    const other = await openQueue(q.location, { create: false, readOnly: true });
    try {
      expect(await other.read(async (tx) => tx.listSettings())).toEqual({ timeout: "60" });
    } finally {
      await other.close();
    }
  });
});
