/**
 * HTML built so that nothing a job supplies can become markup
 * (docs/architecture.md "The web view"): every value interpolated into
 * {@link html} is escaped unless it is itself {@link Html} built here.
 */

/** Markup made by {@link html} or {@link raw}: inserted as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** `text` with `& < > " '` escaped: safe as element content and as a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A value of an interpolation: escaped text, nested markup, or a list of either; null and undefined print nothing. */
type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/** Tagged template: the literal parts as written, every interpolation escaped (see {@link Part}). */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]!) + strings[i + 1]!;
  return new Html(out);
}
