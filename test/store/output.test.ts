/**
 * Shipped attempt output (Store.shipsOutput): appendAttemptOutput (fenced by
 * job, attempt and worker; a repeated chunk written once) and
 * readAttemptOutput. A driver that does not ship output (SQLite: readers use
 * the files on the one host) skips these cases visibly.
 */
import { expect, test } from "bun:test";
import type { OutputChunk } from "../../src/store/attempt-types.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, newJob, record } from "../support/store.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const bytes = (s: string) => new TextEncoder().encode(s);

forEachDriver("shipped output", (q, driver) => {
  test(`store.shipsOutput matches the fixture's declaration (${driver.shipsOutput})`, () => {
    expect(q.store.shipsOutput).toBe(driver.shipsOutput);
  });

  /** A running attempt of worker w1 and a chunk builder for it. */
  const running = async () => {
    const job = await insertJob(q.store);
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    const chunk = (over: Partial<OutputChunk>): OutputChunk => ({
      jobId: job.id,
      attemptNo: attempt.attempt_no,
      workerId: "w1",
      stream: "stdout",
      offset: 0,
      bytes: bytes(""),
      truncated: false,
      ...over,
    });
    const append = (c: OutputChunk) => q.store.write(async (tx) => tx.appendAttemptOutput(c));
    const read = (stream: "stdout" | "stderr", offset = 0, max = 1 << 20, attemptNo = attempt.attempt_no) =>
      q.store.read(async (tx) => tx.readAttemptOutput(job.id, attemptNo, stream, offset, max));
    return { job, attempt, chunk, append, read };
  };

  test.if(driver.shipsOutput)(
    "chunks appended by offset read back as one stream, with its size; an unshipped stream reads null",
    async () => {
      const { chunk, append, read } = await running();
      expect(await read("stdout")).toBeNull();
      expect(await append(chunk({ offset: 0, bytes: bytes("hello ") }))).toBe(true);
      expect(await append(chunk({ offset: 6, bytes: bytes("wörld\n") }))).toBe(true);
      const all = await read("stdout");
      expect(text(all?.bytes)).toBe("hello wörld\n");
      expect(all).toMatchObject({ size: 13, truncated: false });
      const part = await read("stdout", 6, 3);
      expect(text(part?.bytes)).toBe("wö");
      expect(part?.size).toBe(13);
      expect((await read("stdout", 13, 100))?.bytes.length).toBe(0);
      expect(await read("stderr")).toBeNull();
      expect(await read("stdout", 0, 100, 2)).toBeNull();
    },
  );

  test.if(driver.shipsOutput)("a repeated chunk (same offset) is written once", async () => {
    const { chunk, append, read } = await running();
    await append(chunk({ offset: 0, bytes: bytes("abc") }));
    await append(chunk({ offset: 0, bytes: bytes("abc") }));
    await append(chunk({ offset: 3, bytes: bytes("def") }));
    await append(chunk({ offset: 3, bytes: bytes("def") }));
    const out = await read("stdout");
    expect(text(out?.bytes)).toBe("abcdef");
    expect(out?.size).toBe(6);
  });

  test.if(driver.shipsOutput)("a truncated chunk marks the stream truncated", async () => {
    const { chunk, append, read } = await running();
    await append(chunk({ stream: "stderr", offset: 0, bytes: bytes("partial") }));
    expect((await read("stderr"))?.truncated).toBe(false);
    await append(chunk({ stream: "stderr", offset: 7, bytes: bytes("!"), truncated: true }));
    expect(await read("stderr")).toMatchObject({ size: 8, truncated: true });
  });

  test.if(driver.shipsOutput)(
    "fencing: a chunk from a worker that does not own the attempt changes nothing and returns false",
    async () => {
      const { job, attempt, chunk, append, read } = await running();
      expect(await append(chunk({ workerId: "intruder", bytes: bytes("evil") }))).toBe(false);
      expect(await append(chunk({ attemptNo: attempt.attempt_no + 1, bytes: bytes("evil") }))).toBe(false);
      expect(await read("stdout")).toBeNull();
      expect(await append(chunk({ bytes: bytes("mine") }))).toBe(true);
      expect(await record(q.store, attemptRecord(job.id, attempt.attempt_no, "w1", q.store.now()))).toBe(true);
      // The attempt is over: later chunks are refused, what was shipped stays readable.
      expect(await append(chunk({ offset: 4, bytes: bytes(" late") }))).toBe(false);
      expect(text((await read("stdout"))?.bytes)).toBe("mine");
    },
  );

  test.if(driver.shipsOutput)("a rolled-back write ships nothing", async () => {
    const { chunk, read } = await running();
    await expect(
      q.store.write(async (tx) => {
        await tx.appendAttemptOutput(chunk({ bytes: bytes("lost") }));
        throw new Error("boom");
      }),
    ).rejects.toThrow();
    expect(await read("stdout")).toBeNull();
  });
});

forEachDriver("shipped output: fencing and offsets", (q, driver) => {
  test.if(driver.shipsOutput)(
    "fencing: heartbeat, result, output and the process group of a lost attempt change nothing",
    async () => {
      const lane = "fence";
      const j = await q.store.write(async (tx) => tx.insertJob(newJob({ queue: lane }), q.store.now()));
      await q.store.claimJobs({
        queue: lane,
        workerId: "old",
        workerPid: 1,
        slots: null,
        limit: 1,
        now: q.store.now(),
      });
      const chunk = {
        jobId: j.id,
        attemptNo: 1,
        workerId: "old",
        stream: "stdout" as const,
        offset: 0,
        bytes: new TextEncoder().encode("hello "),
        truncated: false,
      };
      expect(await q.store.write(async (tx) => tx.appendAttemptOutput(chunk))).toBe(true);
      expect(await q.store.write(async (tx) => tx.appendAttemptOutput(chunk))).toBe(true); // the same chunk again: stored once
      expect(
        await q.store.write(async (tx) => tx.appendAttemptOutput({ ...chunk, workerId: "intruder", offset: 6 })),
      ).toBe(false);
      // Taken over: retry --force then a new claim by another worker.
      await q.store.write(async (tx) => {
        await tx.closeAttempt({
          jobId: j.id,
          attemptNo: 1,
          state: "canceled",
          failureReason: "canceled",
          error: "forced",
          now: q.store.now(),
        });
        expect(await tx.requeueJob(j.id, "running", q.store.now())).toBe(true);
      });
      await q.store.claimJobs({
        queue: lane,
        workerId: "new",
        workerPid: 2,
        slots: null,
        limit: 1,
        now: q.store.now(),
      });
      const leases = await q.store.write(async (tx) => tx.heartbeatJobs("old", [{ jobId: j.id, attemptNo: 1 }]));
      expect(leases[0]!.owned).toBe(false);
      expect(
        await q.store.write(async (tx) =>
          tx.appendAttemptOutput({ ...chunk, offset: 6, bytes: new TextEncoder().encode("late") }),
        ),
      ).toBe(false);
      const late = await q.store.write(async (tx) =>
        tx.recordAttempt({
          jobId: j.id,
          attemptNo: 1,
          workerId: "old",
          now: q.store.now(),
          attemptState: "succeeded",
          exitCode: 0,
          signal: null,
          error: null,
          failureReason: null,
          jobState: "done",
          events: [{ event: "succeeded", workerId: "old", detail: null }],
          attempts: 0,
          crashes: 0,
          nextRunAt: 0,
        }),
      );
      expect(late).toBe(false);
      const after = await q.store.read(async (tx) => ({
        job: await tx.getJob(j.id),
        out: await tx.readAttemptOutput(j.id, 1, "stdout", 0, 100),
        events: await tx.eventsOf(j.id),
      }));
      expect(after.job).toMatchObject({ state: "running", locked_by: "new", last_attempt_no: 2 });
      expect(new TextDecoder().decode(after.out!.bytes)).toBe("hello ");
      expect(after.events.map((e) => e.event)).toEqual(["claimed", "claimed"]);
    },
  );

  test.if(driver.shipsOutput)(
    "shipped output: chunks by offset, read from any offset, size and truncation",
    async () => {
      const lane = "output";
      const j = await q.store.write(async (tx) => tx.insertJob(newJob({ queue: lane }), q.store.now()));
      await q.store.claimJobs({ queue: lane, workerId: "w", workerPid: 1, slots: null, limit: 1, now: q.store.now() });
      const enc = (s: string) => new TextEncoder().encode(s);
      const put = (offset: number, text: string, truncated = false) =>
        q.store.write(async (tx) =>
          tx.appendAttemptOutput({
            jobId: j.id,
            attemptNo: 1,
            workerId: "w",
            stream: "stderr",
            offset,
            bytes: enc(text),
            truncated,
          }),
        );
      expect(await q.store.read(async (tx) => tx.readAttemptOutput(j.id, 1, "stderr", 0, 100))).toBeNull();
      await put(0, "abc");
      await put(3, "defg");
      await put(3, "de"); // a shorter repeat keeps the longer chunk
      await put(7, "\u0000\xff", true);
      const all = await q.store.read(async (tx) => tx.readAttemptOutput(j.id, 1, "stderr", 0, 100));
      expect(all!.size).toBe(7 + enc("\u0000\xff").length);
      expect(all!.truncated).toBe(true);
      expect(new TextDecoder().decode(all!.bytes)).toBe("abcdefg\u0000\xff");
      const middle = await q.store.read(async (tx) => tx.readAttemptOutput(j.id, 1, "stderr", 2, 3));
      expect(new TextDecoder().decode(middle!.bytes)).toBe("cde");
      const past = await q.store.read(async (tx) => tx.readAttemptOutput(j.id, 1, "stderr", 50, 3));
      expect(past!.bytes.length).toBe(0);
      expect(await q.store.read(async (tx) => tx.readAttemptOutput(j.id, 1, "stdout", 0, 3))).toBeNull();
    },
  );
});
