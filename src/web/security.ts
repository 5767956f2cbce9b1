/**
 * Who may talk to `spoolctl ui` (docs/architecture.md "The web view", "Safe
 * by default"): the token, as a cookie set by a page opened with `?token=`
 * or as `Authorization: Bearer`; the CSRF token a cookie-carried write must
 * add; and the Host and Origin checks that keep other sites (and DNS
 * rebinding) out.
 */
import { timingSafeEqual } from "node:crypto";

/** A fresh secret: 24 random bytes, 32 URL-safe characters. */
function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
}

/** What {@link checkRequest} compares against. */
export interface Guard {
  token: string;
  csrf: string;
  /** The cookie's name: per port, since a browser's cookies do not tell ports apart. */
  cookie: string;
  /** `Host` header values this server answers (`127.0.0.1:8080`, `localhost:8080`); empty: any (a wildcard bind). */
  hosts: Set<string>;
  /** Whether writes are refused (`--read-only`). */
  readOnly: boolean;
}

/** The addresses a loopback bind may be named by. */
const LOOPBACK_NAMES: Record<string, string[]> = {
  "127.0.0.1": ["127.0.0.1", "localhost"],
  localhost: ["127.0.0.1", "localhost"],
  "::1": ["[::1]", "localhost"],
};

/** Whether `host` (a `--host` value) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  return Object.hasOwn(LOOPBACK_NAMES, host);
}

/** The {@link Guard} of a server bound at `host`:`port`. */
export function guardFor(host: string, port: number, readOnly: boolean): Guard {
  const wildcard = host === "0.0.0.0" || host === "::";
  const names = LOOPBACK_NAMES[host] ?? [host.includes(":") ? `[${host}]` : host];
  return {
    token: newSecret(),
    csrf: newSecret(),
    cookie: `spoolctl_ui_${port}`,
    hosts: new Set(wildcard ? [] : names.map((n) => `${n}:${port}`)),
    readOnly,
  };
}

/** Whether `given` equals `secret`, in time that does not depend on where they differ. */
export function sameSecret(given: string | null | undefined, secret: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer TOKEN` header, or undefined. */
export function bearerOf(req: Request): string | undefined {
  return req.headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
}

/** The value of cookie `name` in a `Cookie` header, or null. */
function cookieValue(header: string | null, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The verdict on a request: let in (and how it proved itself), or refused with a status and why. */
export type Admission =
  | { ok: true; by: "cookie" | "bearer" | "query" }
  | { ok: false; status: 401 | 403; message: string; remediation: string };

/**
 * Judges `req` before anything is served: a `Host` this server does not
 * answer, or an `Origin` other than its own, is 403 (DNS rebinding, another
 * site's form); no token (cookie, bearer, or `?token=` on a page) is 401; a
 * write carried by the cookie alone without the page's CSRF token is 403.
 */
export function checkRequest(req: Request, url: URL, guard: Guard, isWrite: boolean): Admission {
  const host = req.headers.get("host") ?? "";
  if (guard.hosts.size > 0 && !guard.hosts.has(host))
    return {
      ok: false,
      status: 403,
      message: `this server does not answer for host ${JSON.stringify(host.slice(0, 200))}`,
      remediation: `open the address spoolctl ui printed (${[...guard.hosts][0]})`,
    };
  const origin = req.headers.get("origin");
  if (origin !== null && !guard.hosts.has(origin.replace(/^https?:\/\//, "")) && guard.hosts.size > 0)
    return {
      ok: false,
      status: 403,
      message: `a request from another site (${JSON.stringify(origin.slice(0, 200))}) is refused`,
      remediation: "use the web view's own pages, or call the API without a browser (Authorization: Bearer TOKEN)",
    };
  if (sameSecret(bearerOf(req), guard.token)) return { ok: true, by: "bearer" };
  const remediation =
    "open the URL that spoolctl ui printed (it carries ?token=…), or send Authorization: Bearer TOKEN";
  if (!isWrite && sameSecret(url.searchParams.get("token"), guard.token)) return { ok: true, by: "query" };
  if (!sameSecret(cookieValue(req.headers.get("cookie"), guard.cookie), guard.token))
    return { ok: false, status: 401, message: "this page needs the web view's token", remediation };
  if (isWrite && !sameSecret(req.headers.get("x-csrf-token"), guard.csrf))
    return {
      ok: false,
      status: 403,
      message: "a write from the browser needs the page's CSRF token (X-CSRF-Token)",
      remediation: "reload the page and try again",
    };
  return { ok: true, by: "cookie" };
}

/** The `Set-Cookie` value that lets a browser in after it opened `?token=` (HttpOnly, SameSite=Strict). */
export function tokenCookie(guard: Guard): string {
  return `${guard.cookie}=${guard.token}; HttpOnly; SameSite=Strict; Path=/`;
}
