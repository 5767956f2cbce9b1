/**
 * A preload that counts the SQL statements a whole spoolctl process runs on
 * SQLite (bench/statements.ts): `bun --preload bench/sql-counter.ts
 * CHECKOUT/src/cli.ts ARGS…` with `SPOOLCTL_BENCH_SQL_COUNTS=FILE`. It wraps
 * `Database.prototype` `query`/`prepare`/`exec` (and `run`, exec's alias) as
 * bench/sql-per-job.ts does, so every checkout's statements go through it
 * without a change to its code, and writes {@link SqlCounts} (JSON) to FILE
 * when the process exits. Without the variable it changes nothing.
 *
 * Counted: every call of a statement's `get`/`run`/`all`/`values`/`iterate`
 * and every `exec`, one per call (a multi-statement `exec` string counts
 * once), BEGIN/COMMIT/ROLLBACK and PRAGMAs included, on every connection of
 * the process (the `:memory:` one of a missing file too); and the BEGIN and
 * COMMIT (SAVEPOINT and RELEASE when nested; ROLLBACK when it throws) of a
 * `db.transaction(fn)` call, which bun:sqlite prepares out of our sight.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";

/** What the preload writes at exit. */
export interface SqlCounts {
  /** Statements run (calls), all connections. */
  statements: number;
  /** Explicit transactions (BEGIN…) plus statements run outside one, PRAGMAs left out ({@link explicit} + {@link autocommit}). */
  transactions: number;
  /** BEGIN / BEGIN IMMEDIATE statements run. */
  explicit: number;
  /** Statements other than PRAGMA run with no transaction open: each is a transaction of its own (SQLite's autocommit). */
  autocommit: number;
  /** Calls by statement text (whitespace folded, first 120 characters; `exec ` before an exec's text). */
  byText: Record<string, number>;
}

const out = process.env.SPOOLCTL_BENCH_SQL_COUNTS;
if (out) {
  const counts: SqlCounts = { statements: 0, transactions: 0, explicit: 0, autocommit: 0, byText: {} };
  const tally = (key: string): void => {
    counts.statements++;
    counts.byText[key] = (counts.byText[key] ?? 0) + 1;
  };
  const count = (db: Database, sql: string, label: string): void => {
    tally(`${label}${sql.replace(/\s+/g, " ").trim().slice(0, 120)}`);
    if (/^\s*BEGIN\b/i.test(sql)) counts.explicit++;
    else if (!/^\s*PRAGMA\b/i.test(sql) && !inTransaction(db)) counts.autocommit++;
  };
  const proto = Database.prototype as any;
  const realQuery = proto.query;
  const realPrepare = proto.prepare;
  const realExec = proto.exec;
  const RUNS = new Set(["get", "run", "all", "values", "iterate"]);
  // Counted before the call: whether a transaction is open is read before the statement changes it.
  const wrap = (db: Database, stmt: any, sql: string) =>
    new Proxy(stmt, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (!RUNS.has(prop as string)) return v.bind(target);
        return (...args: unknown[]) => {
          count(db, sql, "");
          return v.apply(target, args);
        };
      },
    });
  proto.query = function (this: Database, sql: string) {
    return wrap(this, realQuery.call(this, sql), sql);
  };
  proto.prepare = function (this: Database, sql: string, ...rest: unknown[]) {
    return wrap(this, realPrepare.call(this, sql, ...rest), sql);
  };
  proto.exec = function (this: Database, sql: string, ...rest: unknown[]) {
    count(this, sql, "exec ");
    return realExec.call(this, sql, ...rest);
  };
  proto.run = proto.exec;
  const realTransaction = proto.transaction;
  proto.transaction = function (this: Database, fn: (...args: unknown[]) => unknown, self?: unknown) {
    const db = this;
    const tx = realTransaction.call(this, fn, self);
    const counted = (variant: (...args: unknown[]) => unknown, begin: string) =>
      function (this: unknown, ...args: unknown[]) {
        const nested = inTransaction(db);
        tally(`transaction ${nested ? "SAVEPOINT" : begin}`);
        if (!nested) counts.explicit++;
        try {
          const result = variant.apply(this, args);
          tally(`transaction ${nested ? "RELEASE" : "COMMIT"}`);
          return result;
        } catch (error) {
          tally(`transaction ${nested ? "ROLLBACK TO" : "ROLLBACK"}`);
          throw error;
        }
      };
    const wrapped = counted(tx, "BEGIN");
    for (const v of ["deferred", "immediate", "exclusive"] as const)
      Object.defineProperty(wrapped, v, { value: counted(tx[v], `BEGIN ${v.toUpperCase()}`) });
    return wrapped;
  };
  process.on("exit", () => {
    counts.transactions = counts.explicit + counts.autocommit;
    writeFileSync(out, JSON.stringify(counts));
  });
}

/** Whether `db` has a transaction open; false for a closed connection (its statement fails anyway). */
function inTransaction(db: Database): boolean {
  try {
    return db.inTransaction;
  } catch {
    return false;
  }
}
