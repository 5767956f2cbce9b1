/**
 * Awaiting store calls one after another. Inside a transaction the calls go to
 * one connection in turn (docs/architecture.md "The driver contract"), so a
 * batch is mapped in order rather than with `Promise.all`.
 */

/** Maps `items` through `fn`, awaiting each call before the next; results in input order. */
export async function mapInOrder<T, U>(items: readonly T[], fn: (item: T, index: number) => Promise<U>): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) out.push(await fn(items[i]!, i));
  return out;
}
