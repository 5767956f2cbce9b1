/**
 * GitHub Actions workflow commands (README "CI example"): the exact syntax
 * of `::group::`, `::endgroup::`, `::error title=…::` and `::stop-commands::`,
 * with GitHub's escaping, for `output --follow --all` under
 * `GITHUB_ACTIONS=true` or `--ci github`. Pure text; the caller writes it.
 */

/** Escapes a command's message: `%`, CR and LF (GitHub's `escapeData`). */
export function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** Escapes a property value (`title=`): as data, and `:` and `,` too (GitHub's `escapeProperty`). */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/** Whether GitHub mode is on: `--ci github`, else `GITHUB_ACTIONS=true` unless `--ci none`. */
export function githubMode(ci: string | undefined, env: Record<string, string | undefined>): boolean {
  return ci === "github" || (ci === undefined && env.GITHUB_ACTIONS === "true");
}

/**
 * One attempt's output as a collapsed group: `::group::TITLE`, its lines
 * between `::stop-commands::TOKEN` and `::TOKEN::` (so a job's own output
 * that looks like a workflow command is printed, never obeyed), then
 * `::endgroup::`. `token`: a value the job cannot guess.
 */
export function groupText(title: string, lines: string[], token: string): string {
  const body = lines.map((l) => `${l}\n`).join("");
  return `::group::${escapeData(title)}\n::stop-commands::${token}\n${body}::${token}::\n::endgroup::\n`;
}

/** An error annotation: `::error title=TITLE::MESSAGE` (the message may span lines, escaped). */
export function errorText(title: string, message: string): string {
  return `::error title=${escapeProperty(title)}::${escapeData(message)}\n`;
}
