/**
 * What a worker records of a failed attempt's stderr (its last line and the
 * line's masked signature, docs/architecture.md "Triage"), for the large
 * queues bench/build-1m.ts and build-1m-pg.ts make: three kinds of failure,
 * each line varying with the job's id, so triage finds three groups as it
 * would on a real queue (rows without them take triage's slow path of
 * reading every job's output).
 */
import { storedSignature } from "../src/ops/failure-signature.ts";

/** SQL for the last stderr line of failed attempt `a` of job `a.job_id` (one kind per `job_id % 3`), and its stored signature. */
export function failureLineSql(): { line: string; signature: string } {
  const kinds = [
    [
      "'curl: (7) Failed to connect to api-' || (a.job_id % 50) || '.internal port 443: Connection refused'",
      "curl: (7) Failed to connect to api-1.internal port 443: Connection refused",
    ],
    [
      "'Error: ENOSPC: no space left on device, write ''/tmp/build-' || a.job_id || '.o'''",
      "Error: ENOSPC: no space left on device, write '/tmp/build-1.o'",
    ],
    [
      "'FAIL test/unit-' || (a.job_id % 200) || '.test.ts (timeout after 5000 ms)'",
      "FAIL test/unit-1.test.ts (timeout after 5000 ms)",
    ],
  ] as const;
  const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const pick = (values: string[]) => `CASE a.job_id % 3 ${values.map((v, i) => `WHEN ${i} THEN ${v}`).join(" ")} END`;
  return {
    line: pick(kinds.map(([sql]) => sql)),
    signature: pick(kinds.map(([, example]) => quote(storedSignature(example)))),
  };
}

/** The UPDATE that gives every failed attempt its line and signature (SQLite and PostgreSQL alike). */
export function recordFailureLinesSql(): string {
  const { line, signature } = failureLineSql();
  return `UPDATE attempts AS a SET stderr_last_line = ${line}, stderr_signature = ${signature} WHERE a.state = 'failed'`;
}
