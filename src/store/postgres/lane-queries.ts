/**
 * The PostgreSQL statements of the lane operations (docs/architecture.md
 * "Lanes and slots"): pause, resume, a lane's slot ceiling, and the list of
 * lane rows. Each is one statement on the lane's `lanes` row. An upsert or
 * UPDATE of the row waits for the claims holding it (FOR SHARE, or FOR UPDATE
 * under slots: claim.ts), which therefore commit before it; a claim that
 * locks the row after it sees the new row (READ COMMITTED re-reads a row it
 * had to wait for), so a committed pause is never missed.
 */
import type { SQL } from "bun";
import type { LaneSetting } from "../../model/job.ts";
import { numOrNull } from "./rows.ts";

type Row = Record<string, unknown>;

/** A `lanes` row as a {@link LaneSetting}. */
function toLane(row: Row): LaneSetting {
  return {
    queue: row.queue as string,
    slots: numOrNull(row.slots),
    paused_at: numOrNull(row.paused_at),
    paused_until: numOrNull(row.paused_until),
    pause_reason: (row.pause_reason as string | null) ?? null,
  };
}

/** Every lane row, by lane name. */
export async function listLanes(tx: SQL): Promise<LaneSetting[]> {
  return ((await tx`SELECT * FROM lanes ORDER BY queue`) as Row[]).map(toLane);
}

/** Upserts the pause of `queue`; returns the row as written. */
export async function pauseLane(
  tx: SQL,
  queue: string,
  now: number,
  until: number | null,
  reason: string | null,
): Promise<LaneSetting> {
  const [row] = await tx`INSERT INTO lanes (queue, paused_at, paused_until, pause_reason)
    VALUES (${queue}, ${now}::float8, ${until}::float8, ${reason}::text)
    ON CONFLICT (queue) DO UPDATE SET paused_at = excluded.paused_at, paused_until = excluded.paused_until,
      pause_reason = excluded.pause_reason
    RETURNING *`;
  return toLane(row as Row);
}

/** Clears the pause of `queue`; returns the row as it was when paused at `now`, else null. */
export async function resumeLane(tx: SQL, queue: string, now: number): Promise<LaneSetting | null> {
  const [row] = await tx`WITH old AS (SELECT * FROM lanes WHERE queue = ${queue} FOR UPDATE),
      cleared AS (UPDATE lanes SET paused_at = NULL, paused_until = NULL, pause_reason = NULL
        WHERE queue = ${queue} RETURNING 1)
    SELECT old.*, (SELECT count(*) FROM cleared) AS n FROM old
    WHERE old.paused_at IS NOT NULL AND (old.paused_until IS NULL OR old.paused_until > ${now}::float8)`;
  return row ? toLane(row as Row) : null;
}

/** Upserts the slot ceiling of `queue` (null clears it); returns the row as written. */
export async function setLaneSlots(tx: SQL, queue: string, slots: number | null): Promise<LaneSetting> {
  const [row] = await tx`INSERT INTO lanes (queue, slots) VALUES (${queue}, ${slots}::int)
    ON CONFLICT (queue) DO UPDATE SET slots = excluded.slots RETURNING *`;
  return toLane(row as Row);
}

/** Makes sure lane `queue` has its row, which every claim of the lane locks (claim.ts); run once per lane and store. */
export async function ensureLane(sql: SQL, queue: string): Promise<void> {
  await sql`INSERT INTO lanes (queue) VALUES (${queue}) ON CONFLICT (queue) DO NOTHING`;
}
