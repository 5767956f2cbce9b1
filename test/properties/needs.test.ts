/**
 * Properties of planning the needs of one add (`planNeeds`, src/ops/needs.ts) for random lines
 * with refs and needs. The rules are docs/architecture.md "Dependencies" ("Adding"):
 *
 * - a job that needs itself and a cycle among the lines are refused before anything is written
 *   (INVALID_INPUT, "nothing was added"), and every other set of lines is planned: the lines
 *   are accepted exactly when their needs, as a graph, have no cycle (checked here against
 *   Kahn's algorithm);
 * - a refused cycle is named, and the names are a real cycle of the lines: each needs the next,
 *   and it ends where it began;
 * - references are the `ref` of another line of the same add (any order) or an existing job
 *   (id, key, `last`): each need lands in exactly one of the two, in the order given;
 * - the default policy is `success`;
 * - the lines' order does not matter: a shuffled add is accepted or refused alike.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { SpoolError } from "../../src/contract/errors.ts";
import { type NeedsSpec, type PlannedNeeds, planNeeds } from "../../src/ops/needs.ts";
import { runs } from "../support/properties.ts";

// Milliseconds of CPU a property; on a loaded machine its wall time may outlast bun's 5 s default.
setDefaultTimeout(60_000);

/** References to existing jobs: ids, keys, `last` (never a line's ref: refs are `r<N>`). */
const OUTSIDE = ["12", "7", "build-key", "last"];

/** An add of up to 9 lines, each with a distinct ref `r<i>` (or none) and needs among the refs and OUTSIDE. */
const lines: fc.Arbitrary<NeedsSpec[]> = fc
  .integer({ min: 1, max: 9 })
  .chain((n) =>
    fc.array(
      fc.record({
        hasRef: fc.boolean(),
        needs: fc.uniqueArray(
          fc.oneof(
            fc.nat({ max: n - 1 }).map((i) => `r${i}`),
            fc.constantFrom(...OUTSIDE),
          ),
          {
            maxLength: 4,
          },
        ),
        policy: fc.constantFrom(undefined, "success" as const, "done" as const),
        // A line needing itself is one case among many, not most of them: kept 1 time in 10.
        keepSelf: fc.integer({ min: 0, max: 9 }).map((k) => k === 0),
      }),
      { minLength: n, maxLength: n },
    ),
  )
  .map((raw) =>
    raw.map((r, i) => {
      const needs = r.needs.filter((ref) => r.keepSelf || ref !== `r${i}`);
      return { ref: r.hasRef ? `r${i}` : null, needs: needs.length ? needs : undefined, needs_policy: r.policy };
    }),
  );

/** An acyclic add: line i only needs lines before it (then shuffled, so not in order). */
const acyclicLines: fc.Arbitrary<NeedsSpec[]> = fc
  .integer({ min: 1, max: 9 })
  .chain((n) =>
    fc.tuple(
      fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => `r${j}`)))),
      fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
    ),
  )
  .map(([needs, order]) => order.map((i) => ({ ref: `r${i}`, needs: needs[i]!.length ? needs[i] : undefined })));

const labels = (specs: NeedsSpec[]) => specs.map((_, i) => `line ${i + 1}`);

/** The edges between lines: i → j when line i needs line j's ref (a line without a ref cannot be needed). */
function edges(specs: NeedsSpec[]): [number, number][] {
  const byRef = new Map(specs.flatMap((s, i) => (s.ref ? [[s.ref, i] as const] : [])));
  return specs.flatMap((s, i) =>
    (s.needs ?? []).flatMap((r) => (byRef.has(r) ? [[i, byRef.get(r)!] as [number, number]] : [])),
  );
}

/** Whether the lines' needs have no cycle (a self-need is one): Kahn's algorithm. */
function acyclic(specs: NeedsSpec[]): boolean {
  const e = edges(specs);
  const indegree = specs.map((_, i) => e.filter(([, to]) => to === i).length);
  const ready = specs.flatMap((_, i) => (indegree[i] === 0 ? [i] : []));
  let seen = 0;
  while (ready.length) {
    const i = ready.pop()!;
    seen++;
    for (const [from, to] of e) if (from === i && --indegree[to]! === 0) ready.push(to);
  }
  return seen === specs.length;
}

function plan(specs: NeedsSpec[]): (PlannedNeeds | undefined)[] | SpoolError {
  try {
    return planNeeds(specs, labels(specs));
  } catch (error) {
    if (error instanceof SpoolError) return error;
    throw error;
  }
}

test("an add is planned exactly when its lines' needs have no cycle; otherwise INVALID_INPUT, nothing added", () => {
  fc.assert(
    fc.property(lines, (specs) => {
      const got = plan(specs);
      if (acyclic(specs)) expect(got).toBeArray();
      else {
        expect(got).toBeInstanceOf(SpoolError);
        const e = got as SpoolError;
        expect(e.code).toBe("INVALID_INPUT");
        expect(e.message).toContain("nothing was added");
      }
    }),
    runs(200),
  );
});

test("every add whose lines only need earlier ones (in any order) is planned", () => {
  fc.assert(
    fc.property(acyclicLines, (specs) => {
      expect(plan(specs)).toBeArray();
    }),
    runs(),
  );
});

test("a refused cycle names a real cycle: each line needs the next, and it ends where it began", () => {
  fc.assert(
    fc.property(lines, (specs) => {
      const got = plan(specs);
      if (!(got instanceof SpoolError) || !got.detail?.cycle) return;
      const cycle = got.detail.cycle as string[];
      expect(cycle.length).toBeGreaterThanOrEqual(2);
      expect(cycle.at(-1)).toBe(cycle[0]);
      for (let k = 0; k + 1 < cycle.length; k++) {
        const line = specs.find((s) => s.ref === cycle[k])!;
        expect(line.needs).toContain(cycle[k + 1]);
      }
    }),
    runs(200),
  );
});

test("each need is either another line (by its ref) or an existing job, in the order given; policy defaults to success", () => {
  fc.assert(
    fc.property(lines, (specs) => {
      const got = plan(specs);
      if (got instanceof SpoolError) return;
      specs.forEach((s, i) => {
        const p = got[i];
        if (!s.needs) return expect(p).toBeUndefined();
        const named = [...p!.earlier.map((j) => specs[j]!.ref!), ...p!.outside];
        expect(named.sort()).toEqual([...s.needs].sort());
        expect(p!.earlier.every((j) => j !== i && specs[j]!.ref !== null)).toBe(true);
        expect(p!.outside.every((r) => !specs.some((o) => o.ref === r))).toBe(true);
        expect(p!.outside).toEqual(s.needs.filter((r) => p!.outside.includes(r)));
        expect(p!.policy).toBe(s.needs_policy ?? "success");
      });
    }),
    runs(200),
  );
});

test("the lines' order does not matter: a shuffled add is planned or refused alike", () => {
  fc.assert(
    fc.property(
      lines.chain((specs) =>
        fc.tuple(fc.constant(specs), fc.shuffledSubarray(specs, { minLength: specs.length, maxLength: specs.length })),
      ),
      ([specs, shuffled]) => {
        expect(plan(shuffled) instanceof SpoolError).toBe(plan(specs) instanceof SpoolError);
      },
    ),
    runs(200),
  );
});
