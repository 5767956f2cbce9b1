/**
 * Human messages on stderr through consola, one line each: an error is
 * `spoolctl: error: CODE: message — remediation`, a warning
 * `spoolctl: warning: CODE: message` (docs/contract.md "Error objects and
 * warnings"). Color only on a TTY and without NO_COLOR.
 */
import { type ConsolaInstance, createConsola, type LogObject } from "consola";
import { guardStdio } from "./stdio.ts";

// Writing through process.stderr: its error handlers first (loading this module is the moment).
guardStdio();

/** Whether stderr may be colored. */
function colorOn(stream: NodeJS.WriteStream = process.stderr): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb";
}

const COLORS: Record<string, string> = { error: "31", fatal: "31", warn: "33", success: "32" };

function line(obj: LogObject): string {
  const text = obj.args.map((a) => (typeof a === "string" ? a : String(a))).join(" ");
  // One spelling for warnings everywhere: `warning:` (beside `error:`), never consola's `warn:`.
  const label = obj.type === "log" || obj.type === "info" ? "" : obj.type === "warn" ? "warning: " : `${obj.type}: `;
  const color = COLORS[obj.type];
  return `spoolctl: ${color && colorOn() ? `\u001b[${color}m${label}\u001b[39m` : label}${text}\n`;
}

/** The CLI's logger: every level to stderr, one line per message, no stack traces. */
export const log: ConsolaInstance = createConsola({
  reporters: [{ log: (obj) => void process.stderr.write(line(obj)) }],
});
