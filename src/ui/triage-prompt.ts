/**
 * How triage's prompts end (docs/architecture.md "Triage"): an answer, Esc
 * (back one level: {@link Back}) or Ctrl-C (stop at once, changing nothing
 * more: {@link Interrupted}). Every change is made only after the person's
 * last answer for it, so either way the job or group on screen is left as it was.
 */
import * as p from "@clack/prompts";
import { SpoolError } from "../contract/errors.ts";
import { canceledByEscape } from "./menu.ts";

/** Thrown when a prompt is left with Ctrl-C: the session ends, changing nothing more. */
export class Interrupted extends Error {}

/** Thrown when a prompt is left with Esc: back one level (text field → menu, job → group, group → list). */
export class Back extends Error {}

/** Awaits a prompt; Esc becomes {@link Back}, any other cancel {@link Interrupted}. */
export async function ask<T>(prompt: Promise<T>): Promise<Exclude<T, symbol>> {
  const value = await prompt;
  if (p.isCancel(value)) throw canceledByEscape() ? new Back() : new Interrupted();
  return value as Exclude<T, symbol>;
}

/** What {@link askOrBack} resolves to when the prompt was left with Esc. */
export const BACK = Symbol("back");

/** Awaits a prompt; Esc resolves {@link BACK}, Ctrl-C raises {@link Interrupted}. */
export async function askOrBack<T>(prompt: Promise<T>): Promise<Exclude<T, symbol> | typeof BACK> {
  try {
    return await ask(prompt);
  } catch (error) {
    if (error instanceof Back) return BACK;
    throw error;
  }
}

/** A prompt validator from a parser: its INVALID_INPUT message, shown under the field. */
export function validator(parse: (v: string) => unknown): (v: string | undefined) => string | undefined {
  return (v) => {
    if (!v || v.trim() === "") return undefined; // empty = back to the menu
    try {
      parse(v.trim());
      return undefined;
    } catch (error) {
      return error instanceof SpoolError ? error.message : String(error);
    }
  };
}
