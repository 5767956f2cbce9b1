/** `add --matrix`: one job per cell, in one transaction (docs/architecture.md "Matrix"). */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { AddData } from "../describe/schemas-core.ts";
import type { BatchAdd } from "../model/job.ts";
import { relativePathWarning } from "../ops/add.ts";
import { markHookBorn } from "../ops/hooks.ts";
import { type AddInput, validateAddInput } from "../ops/job-spec.ts";
import { addWithLaneWarnings, withTrace } from "./add-write.ts";
import { writeRidingOut } from "./ride-out.ts";
import type { VerbContext } from "./verb.ts";

/**
 * `add --matrix`: the cells' specs (./../ops/matrix.ts) validated and added
 * in one transaction, all or none (docs/architecture.md "Matrix"); the answer
 * is the `--from` one (`count`, `jobs`). A relative path is warned about once,
 * for the first cell, not once per cell.
 */
export async function addMatrix(
  // biome-ignore lint/suspicious/noExplicitAny: add's context; only its queue selection is read (writeRidingOut)
  ctx: VerbContext<any>,
  cells: AddInput[],
  batch: BatchAdd | null,
  cwd: string,
): Promise<VerbResult<AddData>> {
  const flag = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`);
  const names = cells.map((c) => c.name!);
  const traced = withTrace(
    markHookBorn(
      cells.map((c, i) => {
        try {
          return validateAddInput(c, flag, cwd);
        } catch (error) {
          if (!(error instanceof SpoolError)) throw error;
          throw new SpoolError(error.code, `--matrix cell ${names[i]}: ${error.message}`, {
            remediation: error.remediation,
            detail: { ...error.detail, cell: names[i] },
          });
        }
      }),
      process.env,
    ),
  );
  const { jobs, warnings } = await writeRidingOut(ctx, (store) =>
    addWithLaneWarnings(store, traced.specs, undefined, names, batch),
  );
  const relative = relativePathWarning(
    traced.specs[0]!,
    cwd,
    "add --cwd . to the command (resolved against this folder)",
  );
  if (relative) warnings.push(relative);
  return { data: { count: jobs.length, jobs }, warnings: [...traced.warnings, ...warnings] };
}
