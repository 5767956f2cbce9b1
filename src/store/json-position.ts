/**
 * Where a JSON text stops being valid, as a line and column: Bun's
 * `JSON.parse` errors name no position ("Property name must be a string
 * literal"), and a person fixing `.spoolctl/config.json` needs one. A small
 * recursive-descent check of RFC 8259's grammar, run only after `JSON.parse`
 * failed; it reports the first character that cannot continue a valid text.
 */

/** A place in a text: 1-based line and column (columns count UTF-16 code units). */
export interface TextPosition {
  line: number;
  column: number;
}

/** Thrown inside the scanner at the offending offset. */
class Stop {
  constructor(readonly at: number) {}
}

/**
 * The position of the first character where `text` is not valid JSON, or
 * null when it is valid (or the scanner cannot tell). Never throws.
 */
export function jsonErrorPosition(text: string): TextPosition | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const stop = (): never => {
    throw new Stop(i);
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) stop();
      i++;
    }
  };
  const string = () => {
    if (text[i] !== '"') stop();
    i++;
    for (;;) {
      const ch = text[i];
      if (ch === undefined || ch < " ") stop();
      i++;
      if (ch === '"') return;
      if (ch === "\\") {
        const esc = text[i];
        if (esc === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) stop();
        } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i++;
        else stop();
      }
    }
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) stop();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        string();
        ws();
        if (text[i] !== ":") stop();
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else stop();
      }
    }
    if (ch === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else stop();
      }
    }
    if (ch === '"') return string();
    if (ch === "t") return literal("true");
    if (ch === "f") return literal("false");
    if (ch === "n") return literal("null");
    return number();
  };
  try {
    value();
    ws();
    if (i < text.length) stop();
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) return null;
    const before = text.slice(0, error.at);
    const line = before.split("\n").length;
    return { line, column: error.at - (before.lastIndexOf("\n") + 1) + 1 };
  }
}
