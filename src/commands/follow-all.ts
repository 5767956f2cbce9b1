/**
 * All output, followed at once (`output --follow --all`, docs/architecture.md
 * "Batches"): every line of every attempt of a selection — a batch, a lane,
 * tags — as whole lines tagged with their job, attempt and stream, including
 * attempts that start after the follow began. Each stream is read from its
 * file on this host, else from the copy its worker ships into a shared
 * database (the {@link Tail} of `output --follow`), so it works from any host
 * of a PostgreSQL queue. Lines are cut at `\n` only: bytes after the last
 * newline wait for the rest of their line (or the attempt's end), so a line is
 * never split, and the caller writes each line whole, so none interleaves.
 */

import type { FollowedLine } from "../describe/schemas-operator.ts";
import type { Attempt, JobFilter } from "../model/job.ts";
import type { StreamName } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { followLook } from "../store/verbs/follow.ts";
import { Tail } from "./follow.ts";

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { FollowedLine };

/** Which jobs to follow: a batch, or a lane and/or tags (see WaitSelection). */
export interface FollowSelection {
  batch?: string;
  queue?: string;
  tags: Record<string, string>;
}

/** How a follow ended: the batch settled, or the caller asked it to stop (Ctrl-C). */
export type FollowAllEnd = "settled" | "stopped";

/** A line longer than this (bytes) is emitted in pieces of this size: memory stays bounded on output without newlines. */
const MAX_LINE_BYTES = 1024 * 1024;

/** Most jobs one look reads. */
const LOOK_LIMIT = 100_000;

const NEWLINE = 0x0a;

/** One followed stream: its tail and the bytes of its unfinished line. */
class LineStream {
  private pending: Uint8Array = new Uint8Array(0);
  private readonly decoder = new TextDecoder();

  constructor(readonly tail: Tail) {}

  /** The whole lines read since the last call; `final`: the attempt ended, so an unfinished last line counts too. */
  async lines(final: boolean): Promise<string[]> {
    const out: string[] = [];
    for await (const chunk of this.tail.read()) this.take(chunk.bytes, out);
    if (final && this.pending.length > 0) {
      out.push(this.decoder.decode(this.pending));
      this.pending = new Uint8Array(0);
    }
    return out;
  }

  private take(bytes: Uint8Array, out: string[]): void {
    let buf = this.pending.length === 0 ? bytes : concat(this.pending, bytes);
    for (;;) {
      const nl = buf.indexOf(NEWLINE);
      if (nl === -1) break;
      out.push(this.decoder.decode(buf.subarray(0, nl)));
      buf = buf.subarray(nl + 1);
    }
    while (buf.length >= MAX_LINE_BYTES) {
      out.push(this.decoder.decode(buf.subarray(0, MAX_LINE_BYTES)));
      buf = buf.subarray(MAX_LINE_BYTES);
    }
    this.pending = buf.slice();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** An attempt being followed: its stdout and stderr. */
interface Followed {
  attempt: Attempt;
  streams: { name: StreamName; lines: LineStream }[];
}

/**
 * Follows every attempt of `sel` (see the module doc), handing each whole line
 * to `emit` in the order read (per stream in order; streams of different
 * attempts as they come). A batch is followed from its first attempt and ends
 * once it is sealed or failed with none of its jobs queued or running and
 * every attempt read to its end; a lane or tag selection follows the attempts
 * running when it starts and every later one, until `shouldStop()` (Ctrl-C).
 * Polls every `pollMs` milliseconds; the attempt state is read before its
 * bytes, so the read after an attempt ended sees all it wrote. `opts.ended`
 * is called with an attempt's final row after its last line was emitted.
 */
export async function followAll(
  store: Store,
  sel: FollowSelection,
  opts: { pollMs: number; shouldStop: () => boolean; ended?: (attempt: Attempt) => void | Promise<void> },
  emit: (line: FollowedLine) => void | Promise<void>,
): Promise<FollowAllEnd> {
  const filter: Omit<JobFilter, "limit"> = {
    ...(sel.batch !== undefined ? { batch: sel.batch } : {}),
    ...(sel.queue !== undefined ? { queue: sel.queue } : {}),
    ...(Object.keys(sel.tags).length ? { tags: sel.tags } : {}),
  };
  const startedAt = store.now();
  /** Per job, the highest attempt number taken up (followed or, before the start, skipped). */
  const taken = new Map<number, number>();
  const followed = new Map<string, Followed>();
  let since = sel.batch !== undefined ? 0 : startedAt;
  let first = true;
  try {
    for (;;) {
      if (opts.shouldStop()) return "stopped";
      const lookAt = store.now();
      const seen = await followLook(store, {
        filter,
        ...(sel.batch !== undefined ? { batch: sel.batch } : {}),
        // A batch's first look reads all its jobs; later looks, and a lane/tag selection, the active and lately ended ones.
        scope: sel.batch !== undefined && first ? { kind: "all" } : { kind: "active", endedSince: since },
        taken,
        followed: [...followed.values()].map((f) => f.attempt),
        limit: LOOK_LIMIT,
      });
      for (const [job, n] of seen.taken) taken.set(job, n);
      const look = {
        batch: seen.batch,
        fresh: seen.fresh,
        states: new Map(seen.now.map((a) => [`${a.job_id}.${a.attempt_no}`, a])),
      };
      first = false;
      // Five seconds of overlap: a job that ended between two looks is seen by the next.
      since = Math.max(0, lookAt - 5);
      for (const attempt of look.fresh) {
        // A lane or tag selection starts with what runs now: attempts that ended before it began are history.
        if (sel.batch === undefined && attempt.state !== "running" && (attempt.finished_at ?? 0) < startedAt) continue;
        const key = `${attempt.job_id}.${attempt.attempt_no}`;
        followed.set(key, {
          attempt,
          streams: (["stdout", "stderr"] as const).map((name) => ({
            name,
            lines: new LineStream(
              new Tail(name, name === "stdout" ? attempt.stdout_path : attempt.stderr_path, store, attempt),
            ),
          })),
        });
        look.states.set(key, attempt);
      }
      for (const [key, f] of followed) {
        const ended = (look.states.get(key) ?? f.attempt).state !== "running";
        for (const s of f.streams) {
          for (const text of await s.lines.lines(ended)) {
            await emit({ job: f.attempt.job_id, attempt: f.attempt.attempt_no, stream: s.name, text });
          }
        }
        if (ended) {
          for (const s of f.streams) s.lines.tail.close();
          followed.delete(key);
          await opts.ended?.(look.states.get(key) ?? f.attempt);
        }
      }
      const b = look.batch;
      if (b && (b.sealed_at !== null || b.failed_at !== null) && b.counts.queued + b.counts.running === 0) {
        if (followed.size === 0) return "settled";
      }
      await Bun.sleep(opts.pollMs);
    }
  } finally {
    for (const f of followed.values()) for (const s of f.streams) s.lines.tail.close();
  }
}
