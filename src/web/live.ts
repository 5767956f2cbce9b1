/**
 * The web view's live streams (docs/architecture.md "The web view", "Live
 * without jumping"): Server-Sent Events of the ledger's cursor, so a page
 * learns that something changed and which jobs, and of a running attempt's
 * output as it is written. Both poll the queue every {@link POLL_MS} and end
 * when the browser goes away.
 */
import type { StreamName } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { eventsPage } from "../store/verbs/events.ts";
import { attemptNow } from "../store/verbs/output.ts";
import { ledgerHead } from "../store/verbs/views.ts";
import { windowFrom } from "./tail.ts";

/** How often a stream looks for news (milliseconds): new output shows within a second. */
const POLL_MS = 400;
/** A comment line this often (milliseconds) keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/** An SSE response whose body `produce` writes through `send` until `signal` aborts or it returns. */
function sseResponse(
  signal: AbortSignal,
  produce: (send: (event: string, data: unknown) => void, alive: () => boolean) => Promise<void>,
): Response {
  const encoder = new TextEncoder();
  let closed = false;
  const stream = new ReadableStream({
    async start(controller) {
      const send = (event: string, data: unknown) => {
        if (!closed) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      };
      const keepalive = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(": keepalive\n\n"));
      }, KEEPALIVE_MS);
      signal.addEventListener("abort", () => {
        closed = true;
      });
      try {
        await produce(send, () => !closed && !signal.aborted);
      } catch (error) {
        send("error", { message: error instanceof Error ? error.message : String(error) });
      } finally {
        clearInterval(keepalive);
        closed = true;
        try {
          controller.close();
        } catch {
          // the browser went away first
        }
      }
    },
    cancel() {
      closed = true;
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" },
  });
}

/**
 * `/live?since=N`: an event `change` with `{cursor, jobs}` (the ledger's
 * newest id and the ids of the jobs whose rows are new) whenever the ledger
 * grows past `since` (the head when not given), first `hello` with the cursor.
 */
export function liveChanges(store: Store, since: number | null, signal: AbortSignal): Response {
  return sseResponse(signal, async (send, alive) => {
    let cursor = since ?? (await ledgerHead(store));
    send("hello", { cursor });
    while (alive()) {
      const page = await eventsPage(store, { sinceId: cursor, limit: 1000 });
      if (page.count > 0) {
        cursor = page.pagination.cursor;
        send("change", { cursor, jobs: [...new Set(page.events.map((e) => e.job_id))].slice(0, 200) });
      }
      await Bun.sleep(POLL_MS);
    }
  });
}

/**
 * `/live/output?id=…&attempt=…&stream=…&from=…`: events `output` with
 * `{offset, end, text}` as the attempt's stream grows past `from` (bytes),
 * and `end` with the attempt's state once it has finished and all is sent.
 */
export function liveOutput(
  store: Store,
  where: { jobId: number; attemptNo: number; stream: StreamName; from: number },
  signal: AbortSignal,
): Response {
  return sseResponse(signal, async (send, alive) => {
    let from = where.from;
    while (alive()) {
      const attempt = await attemptNow(store, where.jobId, where.attemptNo);
      if (!attempt) {
        send("end", { state: "gone" });
        return;
      }
      const chunk = await windowFrom(store, attempt, where.stream, from, 256 * 1024);
      if (chunk.end > from) {
        send("output", { offset: chunk.offset, end: chunk.end, text: chunk.text });
        from = chunk.end;
        continue; // more may be waiting already
      }
      if (attempt.state !== "running") {
        send("end", { state: attempt.state });
        return;
      }
      await Bun.sleep(POLL_MS);
    }
  });
}
