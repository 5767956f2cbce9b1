/**
 * The SQLite statements of the lane operations (docs/architecture.md "Lanes
 * and slots"): pause, resume, a lane's slot ceiling, and the list of lane
 * rows. Each runs inside the caller's write transaction (SQLite's one writer),
 * so the claim, which reads the same row in its own statement, sees either
 * the old row or the new one, never half of it.
 */
import type { Database } from "bun:sqlite";
import type { LaneSetting } from "../../model/job.ts";

/** A `lanes` row whose pause is in force at ?2 (epoch seconds): the claim's guard, in SQL. */
const PAUSED_AT = "paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > ?2)";

/** Every lane row, by lane name. */
export function listLanes(db: Database): LaneSetting[] {
  return db.query("SELECT * FROM lanes ORDER BY queue").all() as LaneSetting[];
}

/** Upserts the pause of `queue`; returns the row as written. */
export function pauseLane(
  db: Database,
  queue: string,
  now: number,
  until: number | null,
  reason: string | null,
): LaneSetting {
  return db
    .query(
      `INSERT INTO lanes (queue, paused_at, paused_until, pause_reason) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (queue) DO UPDATE SET paused_at = excluded.paused_at, paused_until = excluded.paused_until,
         pause_reason = excluded.pause_reason
       RETURNING *`,
    )
    .get(queue, now, until, reason) as LaneSetting;
}

/** Clears the pause of `queue`; returns the row as it was when paused at `now`, else null. */
export function resumeLane(db: Database, queue: string, now: number): LaneSetting | null {
  const before = db
    .query(`SELECT * FROM lanes WHERE queue = ?1 AND ${PAUSED_AT}`)
    .get(queue, now) as LaneSetting | null;
  db.query("UPDATE lanes SET paused_at = NULL, paused_until = NULL, pause_reason = NULL WHERE queue = ?").run(queue);
  return before;
}

/** Upserts the slot ceiling of `queue` (null clears it); returns the row as written. */
export function setLaneSlots(db: Database, queue: string, slots: number | null): LaneSetting {
  return db
    .query(
      `INSERT INTO lanes (queue, slots) VALUES (?1, ?2)
       ON CONFLICT (queue) DO UPDATE SET slots = excluded.slots RETURNING *`,
    )
    .get(queue, slots) as LaneSetting;
}
