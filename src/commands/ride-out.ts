/**
 * `add`, `enqueue` and `status` ride out a busy queue (docs/architecture.md
 * "Contention"): the open and the insert are tried again while they meet
 * `LOCKED`, for up to `SPOOLCTL_LOCK_WAIT` seconds, with one line on stderr
 * (text mode) the first time so a person knows why the command waits.
 */
import type { SpoolError } from "../contract/errors.ts";
import { lockWaitSeconds, rideOutLock } from "../ops/ride-out.ts";
import type { Store } from "../store/store.ts";
import type { VerbContext } from "./verb.ts";

/**
 * Opens the queue for writing and runs `fn` on it, both riding out `LOCKED`
 * (see {@link rideOutLock}); the store is opened once. Raises `LOCKED` when the
 * limit passes, `INVALID_INPUT` for a bad `SPOOLCTL_LOCK_WAIT`, and whatever
 * `fn` raises otherwise.
 */
// biome-ignore lint/suspicious/noExplicitAny: any verb's context; only its flags' queue selection is read
export async function writeRidingOut<T>(ctx: VerbContext<any>, fn: (store: Store) => Promise<T>): Promise<T> {
  return ridingOut(ctx, true, fn);
}

/**
 * {@link writeRidingOut} for a reader (`status`): the queue is opened as the
 * verb opens it (read-only, nothing created) and `fn` read, both riding out
 * `LOCKED`, which a reader meets when a PostgreSQL server turns connections
 * away for now (no slot free, starting up).
 */
// biome-ignore lint/suspicious/noExplicitAny: any verb's context; only its flags' queue selection is read
export async function readRidingOut<T>(ctx: VerbContext<any>, fn: (store: Store) => Promise<T>): Promise<T> {
  return ridingOut(ctx, false, fn);
}

// biome-ignore lint/suspicious/noExplicitAny: as above
async function ridingOut<T>(ctx: VerbContext<any>, create: boolean, fn: (store: Store) => Promise<T>): Promise<T> {
  const limitSeconds = lockWaitSeconds();
  let told = false;
  const onWait = (error: SpoolError) => {
    if (told || ctx.json) return;
    told = true;
    process.stderr.write(`spoolctl: ${error.message}; still trying for up to ${limitSeconds}s (SPOOLCTL_LOCK_WAIT)\n`);
  };
  const store = await rideOutLock(() => ctx.open({ create }), { limitSeconds, onWait });
  return await rideOutLock(() => fn(store), { limitSeconds, onWait });
}
