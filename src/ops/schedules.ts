/**
 * `schedule add|list|rm|pause|resume|run-now|tick` (docs/architecture.md "Recurring jobs"):
 * what the user typed, validated into the draft a store operation takes, and a schedule
 * as the verbs show it. The operations themselves are in src/store/verbs/schedules.ts.
 */
import { SpoolError } from "../contract/errors.ts";
import type { ScheduleData } from "../describe/schemas-recurring.ts";
import type { Job } from "../model/job.ts";
import type { Overlap, Schedule } from "../model/recurring.ts";
import { type AddInput, type JobSpec, validateAddInput } from "./job-spec.ts";
import {
  catchUpText,
  parseCatchUp,
  parseCron,
  parseEvery,
  parseOverlap,
  parseZone,
  slotText,
} from "./schedule-time.ts";
import { durationText } from "./values.ts";

/** A schedule or hook name: letters, digits, `.`, `_`, `-` (no `:`, which the slot keys use). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Raises `INVALID_INPUT` unless `name` is a valid schedule or hook name. */
export function checkName(what: "schedule" | "hook", name: string): string {
  if (NAME.test(name)) return name;
  throw new SpoolError("INVALID_INPUT", `${JSON.stringify(name)} is not a ${what} name`, {
    remediation: `name it with 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, e.g. nightly-backup`,
    detail: { name },
  });
}

/** A checked `schedule add`: exactly one rule (`cron` with its zone, or `every_seconds`), its policies and its job. */
export type ScheduleDraft = {
  name: string;
  catch_up: string;
  overlap: Overlap;
  /** The job each slot adds, as `add` validated it (no key, no delay: each slot gives its own). */
  spec: JobSpec;
} & ({ cron: string; tz: string | null; every_seconds: null } | { cron: null; tz: null; every_seconds: number });

/** `schedule add` as typed. */
export interface ScheduleInput {
  name: string;
  cron?: string;
  every?: string;
  tz?: string;
  catchUp?: string;
  overlap?: string;
  /** The job flags and command, as `add` takes them (`--key`, `--after`, `--at` are refused). */
  job: AddInput;
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { ScheduleData };

/** A stored schedule as {@link ScheduleData}. */
export function scheduleData(s: Schedule, lastState: Job["state"] | null): ScheduleData {
  const rule =
    s.cron !== null ? `cron '${s.cron}'${s.tz ? ` ${s.tz}` : " UTC"}` : `every ${durationText(s.every_seconds!)}`;
  return {
    name: s.name,
    rule,
    cron: s.cron,
    every_seconds: s.every_seconds,
    tz: s.tz,
    queue: s.queue,
    argv: s.job.argv,
    catch_up: s.catch_up,
    overlap: s.overlap,
    paused: s.paused,
    next_slot: s.paused ? null : s.next_slot,
    next_fire: s.paused ? null : slotText(s.next_slot, s.tz),
    last_slot: s.last_slot === null ? null : slotText(s.last_slot, s.tz),
    last_job_id: s.last_job_id,
    last_job_state: lastState,
  };
}

/**
 * Validates a `schedule add` (the rule, zone and policies, and the job as `add` would,
 * relative paths against `cwd`) into the draft the `addSchedule` verb stores. Raises
 * `INVALID_INPUT` with the reason for a bad rule, zone or job flag.
 */
export function planSchedule(input: ScheduleInput, cwd: string): ScheduleDraft {
  const name = checkName("schedule", input.name);
  if ((input.cron === undefined) === (input.every === undefined))
    throw new SpoolError("INVALID_INPUT", "give a schedule either --cron EXPR or --every DURATION", {
      remediation: `spoolctl schedule add ${name} --cron '0 3 * * *' -- CMD   or   spoolctl schedule add ${name} --every 10m -- CMD`,
    });
  for (const [flag, v] of [
    ["--key", input.job.key],
    ["--after", input.job.after],
    ["--at", input.job.at],
  ] as const)
    if (v !== undefined)
      throw new SpoolError("INVALID_INPUT", `${flag} has no meaning for a schedule: each slot makes its own job`, {
        remediation: `leave out ${flag}; each job gets the key sched:${name}:<slot> and is due at its slot`,
      });
  if (input.tz !== undefined && input.every !== undefined)
    throw new SpoolError(
      "INVALID_INPUT",
      "--tz applies to --cron only: --every slots are whole intervals of UTC time",
      {
        remediation: "leave out --tz, or give the times with --cron",
      },
    );
  const tz = input.tz === undefined ? null : parseZone(input.tz);
  const cron = input.cron === undefined ? null : parseCron(input.cron, tz);
  const every = input.every === undefined ? null : parseEvery(input.every);
  const catchUp = catchUpText(parseCatchUp(input.catchUp ?? "last"));
  const overlap = parseOverlap(input.overlap ?? "skip");
  const spec = validateAddInput(input.job, (n) => (n.length === 1 ? `-${n}` : `--${n}`), cwd);
  const rule = cron !== null ? { cron, tz, every_seconds: null } : { cron: null, tz: null, every_seconds: every! };
  return { name, ...rule, catch_up: catchUp, overlap, spec };
}
