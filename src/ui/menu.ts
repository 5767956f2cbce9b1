/**
 * Menus of `spoolctl triage` (docs/architecture.md "Triage"): arrow keys (and
 * j/k) move, Enter picks, and each option's hotkey picks it at once — what
 * @clack/prompts offers only separately (`select` moves, `selectKey` takes
 * keys). Built on @clack/core's SelectPrompt, the class `select` itself uses,
 * so cancel keys, raw mode and rendering rules are the library's. Also tells
 * Esc (back one level) from Ctrl-C (stop) after any prompt was canceled,
 * which the library reports alike.
 */
import { SelectPrompt } from "@clack/core";
import { colorEnabled, paint } from "./color.ts";
import { clipColumns } from "./text.ts";

/** One option of a {@link menu}. `key` is its hotkey (one character; never j, k, h, l: they move). */
export interface MenuOption<T extends string> {
  value: T;
  key?: string;
  label: string;
  hint?: string;
}

/** How the last canceled prompt was left: Esc (back) or anything else (Ctrl-C: stop). */
let lastKeyWasEscape = false;
let watching = false;

/**
 * Starts noting which key canceled a prompt (readline's keypress events on
 * stdin, which every prompt enables); idempotent.
 */
export function watchCancelKeys(): void {
  if (watching) return;
  watching = true;
  process.stdin.on("keypress", (_char: string | undefined, key: { name?: string } | undefined) => {
    lastKeyWasEscape = key?.name === "escape";
  });
}

/** Whether the last canceled prompt was left with Esc (see {@link watchCancelKeys}). */
export function canceledByEscape(): boolean {
  return lastKeyWasEscape;
}

/**
 * A menu: `message`, then the options, the cursor on `initial` (default the
 * first). Resolves the chosen value, or the cancel symbol (Esc, Ctrl-C).
 */
export function menu<T extends string>(message: string, options: MenuOption<T>[], initial?: T): Promise<T | symbol> {
  const color = paint(colorEnabled(process.stdout));
  const width = Math.max(40, (process.stdout.columns || 80) - 4);
  const keyOf = (o: MenuOption<T>) => (o.key ? `[${o.key}] ` : "");
  const line = (o: MenuOption<T>, active: boolean) => {
    const hint = o.hint ? color.dim(` (${o.hint})`) : "";
    const text = clipColumns(`${keyOf(o)}${o.label}`, width - 4);
    return active ? `${color.green("●")} ${text}${hint}` : `${color.dim("○")} ${color.dim(text)}${hint}`;
  };
  const prompt = new SelectPrompt<MenuOption<T>>({
    options,
    initialValue: initial,
    render() {
      const chosen = this.options[this.cursor]!;
      switch (this.state) {
        case "submit":
          return `│\n◇  ${message}\n│  ${color.dim(chosen.label)}`;
        case "cancel":
          // Not the option under the cursor: nothing was picked (Esc went back, Ctrl-C stopped).
          return `│\n■  ${message}\n│  ${color.dim(lastKeyWasEscape ? "back" : "stopped")}\n│`;
        default: {
          // A window of the options around the cursor, so a long list never outgrows the screen.
          const room = Math.max(5, (process.stdout.rows || 24) - 8);
          const start = Math.min(
            Math.max(0, this.cursor - Math.floor(room / 2)),
            Math.max(0, this.options.length - room),
          );
          const shown = this.options.slice(start, start + room);
          const rows = shown.map((o, i) => `│  ${line(o, start + i === this.cursor)}`);
          if (start > 0) rows.unshift(`│  ${color.dim(`… ${start} more above`)}`);
          const below = this.options.length - start - shown.length;
          if (below > 0) rows.push(`│  ${color.dim(`… ${below} more below`)}`);
          return `│\n◆  ${message}\n${rows.join("\n")}\n└  ${color.dim("↑/↓ move · Enter picks · or press the key in [ ] · Esc back · Ctrl-C stop")}\n`;
        }
      }
    },
  });
  prompt.on("key", (char: string | undefined) => {
    if (char?.length !== 1) return;
    const index = options.findIndex((o) => o.key !== undefined && o.key.toLowerCase() === char.toLowerCase());
    if (index === -1) return;
    // As Enter would: the cursor on the option, then submit (the library renders and closes after "key").
    prompt.cursor = index;
    prompt.value = options[index]!.value;
    prompt.state = "submit";
  });
  return prompt.prompt() as Promise<T | symbol>;
}
