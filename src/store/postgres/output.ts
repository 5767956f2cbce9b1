/**
 * Shipped attempt output (Store.shipsOutput): workers send each stream in
 * chunks keyed by their byte offset, so a chunk sent twice (a retry after a
 * lost connection) is stored once, and no chunk rewrites the ones before it
 * (a growing bytea would be copied whole on every append).
 */
import type { SQL } from "bun";
import type { OutputChunk } from "../attempt-types.ts";
import type { OutputStream, ShippedOutput } from "../reader.ts";
import { num } from "./rows.ts";

/**
 * Stores a chunk if the worker still owns the attempt (job running, locked by
 * it, same attempt number: the row is share-locked so a concurrent reap or
 * retry is waited for and re-checked). Returns whether it owns it. The same
 * offset again keeps the longer chunk.
 */
export async function appendOutput(tx: SQL, c: OutputChunk): Promise<boolean> {
  const [row] = await tx`
    WITH owner AS (
      SELECT id FROM jobs WHERE id = ${c.jobId} AND state = 'running' AND locked_by = ${c.workerId} AND last_attempt_no = ${c.attemptNo}
      FOR SHARE),
    stored AS (
      INSERT INTO attempt_output (job_id, attempt_no, stream, byte_offset, bytes, truncated)
      SELECT ${c.jobId}::bigint, ${c.attemptNo}::int, ${c.stream}::text, ${c.offset}::bigint, ${c.bytes}::bytea, ${c.truncated}::boolean FROM owner
      ON CONFLICT (job_id, attempt_no, stream, byte_offset) DO UPDATE SET bytes = excluded.bytes, truncated = excluded.truncated
        WHERE length(excluded.bytes) > length(attempt_output.bytes) OR (excluded.truncated AND NOT attempt_output.truncated)
      RETURNING 1)
    SELECT (SELECT count(*) FROM owner)::int AS owned, (SELECT count(*) FROM stored)::int AS stored`;
  return row.owned > 0;
}

/**
 * Up to `maxBytes` of a stream from `offset`, with the stream's shipped size
 * (the end of its furthest chunk) and whether it was truncated; null when
 * nothing was shipped for it. A gap between chunks (never left by a worker
 * that ships in order) reads as zero bytes.
 */
export async function readOutput(
  tx: SQL,
  jobId: number,
  attemptNo: number,
  stream: OutputStream,
  offset: number,
  maxBytes: number,
): Promise<ShippedOutput | null> {
  const [meta] = await tx`SELECT count(*)::int AS chunks, coalesce(max(byte_offset + length(bytes)), 0)::float8 AS size,
      coalesce(bool_or(truncated), false) AS truncated
    FROM attempt_output WHERE job_id = ${jobId} AND attempt_no = ${attemptNo} AND stream = ${stream}`;
  if (meta.chunks === 0) return null;
  const size = meta.size as number;
  const start = Math.max(0, offset);
  const end = Math.min(size, start + Math.max(0, maxBytes));
  const bytes = new Uint8Array(Math.max(0, end - start));
  if (bytes.length > 0) {
    const rows = (await tx`SELECT byte_offset, bytes FROM attempt_output
      WHERE job_id = ${jobId} AND attempt_no = ${attemptNo} AND stream = ${stream}
        AND byte_offset < ${end}::bigint AND byte_offset + length(bytes) > ${start}::bigint
      ORDER BY byte_offset`) as { byte_offset: unknown; bytes: Uint8Array }[];
    for (const r of rows) {
      const at = num(r.byte_offset);
      const from = Math.max(start, at);
      const to = Math.min(end, at + r.bytes.length);
      if (to > from) bytes.set(r.bytes.subarray(from - at, to - at), from - start);
    }
  }
  return { bytes, size, truncated: meta.truncated === true };
}
