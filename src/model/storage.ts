/**
 * What a queue's storage reports about itself (docs/architecture.md "The
 * driver contract", "Storage conditions"): a driver's readiness check for
 * `doctor`, and the free space of a disk the queue writes to. Plain data; the
 * checks and measures are the store's (src/store/index.ts, src/store/space.ts).
 */

/** One readiness check a driver reports to `doctor`. */
export interface StoreCheck {
  id: string;
  status: "pass" | "warn" | "fail" | "skip";
  message: string;
  remediation: string | null;
}

/** One disk a queue writes to. */
export interface DiskSpace {
  /** What it holds: the database's folder or the spool. */
  role: "database" | "spool";
  /** The folder asked about (its nearest existing ancestor was measured). */
  path: string;
  /** Bytes this process may still write there (root may use the reserved blocks). */
  freeBytes: number;
  /** Whether {@link freeBytes} is under the store's low-space mark (`LOW_SPACE_BYTES`, src/store/space.ts). */
  full: boolean;
}
