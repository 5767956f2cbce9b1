/**
 * The web view's server (docs/architecture.md "The web view"): `Bun.serve`
 * in the CLI process. Every request is judged by src/web/security.ts first;
 * then the pages, the API of src/web/api.ts, the live streams and the two
 * assets. Nothing outside the queue is served.
 */
import { SpoolError } from "../contract/errors.ts";
import { CONTENT_TYPES } from "../ops/metrics.ts";
import { parseStream } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { jobAttempt } from "../store/verbs/output.ts";
import { API_WRITES, answerApi, errorResponse, httpStatus, type VerbRunner } from "./api.ts";
import { APP_CSS, APP_JS } from "./assets.ts";
import { escapeHtml } from "./html.ts";
import { liveChanges, liveOutput } from "./live.ts";
import { OUTPUT_WINDOW } from "./pages/job.ts";
import { routePage } from "./routes.ts";
import { type Admission, bearerOf, checkRequest, type Guard, guardFor, sameSecret, tokenCookie } from "./security.ts";
import { windowBefore } from "./tail.ts";

/** What {@link startWebServer} needs. */
export interface WebOptions {
  /** Address to bind (`127.0.0.1` unless the user said otherwise). */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  readOnly: boolean;
  runner: VerbRunner;
  /** The queue served, open for the whole run. */
  store: Store;
  /** How the header names the queue (its path or URL without password). */
  queueLabel: string;
  /** `/metrics`: the exposition, and a token that reads it alone (`--metrics-token`). */
  metrics: { token: string | undefined; scrape(openmetrics: boolean): Promise<string> };
}

/** A running web view. */
export interface WebServer {
  /** The URL to open: `http://HOST:PORT/?token=TOKEN`. */
  url: string;
  port: number;
  guard: Guard;
  /** Stops answering and closes open streams. */
  stop(): Promise<void>;
}

/** Headers every answer carries: nothing from elsewhere runs, nothing frames it, the token never leaks as a referrer. */
const SAFE_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

function withSafeHeaders(response: Response): Response {
  for (const [k, v] of Object.entries(SAFE_HEADERS)) response.headers.set(k, v);
  if (!response.headers.has("cache-control")) response.headers.set("cache-control", "no-store");
  return response;
}

/** A small HTML page for a refusal or an error (no script, no asset: it must show without the token). */
function messagePage(status: number, title: string, message: string, remediation: string): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · spoolctl</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p>${escapeHtml(remediation)}</p></main></body></html>`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

/** The refusal of an admission that failed, as an envelope for the API and a page for the rest. */
function refusal(path: string, admission: Exclude<Admission, { ok: true }>): Response {
  if (path.startsWith("/api/"))
    return errorResponse(
      admission.status,
      admission.status === 401 ? "INVALID_INPUT" : "SAFETY_BLOCK",
      admission.message,
      admission.remediation,
    );
  return messagePage(
    admission.status,
    admission.status === 401 ? "Token needed" : "Refused",
    admission.message,
    admission.remediation,
  );
}

/** `/metrics`: OpenMetrics when the scraper asks for it (as Prometheus does), else the text format. */
async function metricsResponse(opts: WebOptions, req: Request): Promise<Response> {
  const openmetrics = (req.headers.get("accept") ?? "").includes("application/openmetrics-text");
  return new Response(await opts.metrics.scrape(openmetrics), {
    headers: { "content-type": CONTENT_TYPES[openmetrics ? "openmetrics" : "prometheus"] },
  });
}

/** A non-negative integer of the query, or null when absent; `INVALID_INPUT` when malformed. */
function intParam(url: URL, key: string): number | null {
  const v = url.searchParams.get(key);
  if (v === null) return null;
  if (!/^\d{1,15}$/.test(v))
    throw new SpoolError("INVALID_INPUT", `${key} must be a whole number, not ${JSON.stringify(v.slice(0, 200))}`);
  return Number(v);
}

/** `/output?id&attempt&stream&before`: the window of output before byte `before`, as JSON (the page's "load earlier"). */
async function outputWindow(store: Store, url: URL): Promise<Response> {
  const [stream] = parseStream(url.searchParams.get("stream") ?? "stdout");
  const { attempt } = await jobAttempt(store, url.searchParams.get("id") ?? "", intParam(url, "attempt"));
  if (!attempt) throw new SpoolError("NOT_FOUND", "the job has not run yet");
  const w = await windowBefore(store, attempt, stream!, intParam(url, "before"), OUTPUT_WINDOW);
  return Response.json(w);
}

/**
 * Starts the web view. Raises `INVALID_INPUT` when the port is taken or the
 * address cannot be bound (the message says which, and what to do).
 */
export function startWebServer(opts: WebOptions): WebServer {
  let guard: Guard = guardFor(opts.host, opts.port, opts.readOnly);
  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const path = url.pathname;
    const isApiWrite = path.startsWith("/api/") && API_WRITES.has(path.slice(5));
    const isWrite = req.method !== "GET" && req.method !== "HEAD";
    if (path === "/metrics" && opts.metrics.token !== undefined && sameSecret(bearerOf(req), opts.metrics.token))
      return await metricsResponse(opts, req);
    const admission = checkRequest(req, url, guard, isWrite || isApiWrite);
    if (!admission.ok) return refusal(path, admission);
    try {
      if (admission.by === "query" && !path.startsWith("/api/")) {
        // The token goes into the cookie and out of the address bar (and the history).
        url.searchParams.delete("token");
        return new Response(null, {
          status: 303,
          headers: { location: `${url.pathname}${url.search}`, "set-cookie": tokenCookie(guard) },
        });
      }
      if (path === "/assets/app.js")
        return new Response(APP_JS, { headers: { "content-type": "text/javascript; charset=utf-8" } });
      if (path === "/assets/app.css")
        return new Response(APP_CSS, { headers: { "content-type": "text/css; charset=utf-8" } });
      if (path.startsWith("/api/"))
        return await answerApi(opts.runner, path.slice(5), req.method, url.searchParams, guard.readOnly);
      if (isWrite)
        return errorResponse(
          405,
          "INVALID_INPUT",
          `${req.method} ${path} is not served`,
          "writes go to POST /api/VERB",
        );
      if (path === "/live") return liveChanges(opts.store, intParam(url, "since"), req.signal);
      if (path === "/live/output") {
        const [stream] = parseStream(url.searchParams.get("stream") ?? "stdout");
        return liveOutput(
          opts.store,
          {
            jobId: intParam(url, "id") ?? 0,
            attemptNo: intParam(url, "attempt") ?? 0,
            stream: stream!,
            from: intParam(url, "from") ?? 0,
          },
          req.signal,
        );
      }
      if (path === "/output") return await outputWindow(opts.store, url);
      if (path === "/metrics") return await metricsResponse(opts, req);
      const page = await routePage(path, url, {
        runner: opts.runner,
        store: opts.store,
        readOnly: guard.readOnly,
        csrf: guard.csrf,
        queueLabel: opts.queueLabel,
      });
      return (
        page ?? messagePage(404, "Not found", `nothing is served at ${path}`, "use the links of the overview page (/)")
      );
    } catch (error) {
      const e =
        error instanceof SpoolError ? error : new SpoolError("INTERNAL", `unexpected failure: ${String(error)}`);
      const status = httpStatus(e.exitCode);
      return path === "/output"
        ? errorResponse(status, e.code, e.message, e.remediation)
        : messagePage(status, e.code, e.message, e.remediation);
    }
  };
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: opts.host,
      port: opts.port,
      idleTimeout: 0, // the live streams stay open
      fetch: async (req) => withSafeHeaders(await handle(req)),
      error: () =>
        withSafeHeaders(
          messagePage(500, "Error", "the web view failed to answer", "see the terminal that runs spoolctl ui"),
        ),
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "EADDRNOTAVAIL")
      throw new SpoolError("INVALID_INPUT", `cannot serve on ${opts.host}: it is not an address of this machine`, {
        remediation: "give one of this machine's addresses with --host (127.0.0.1, the default; 0.0.0.0 for all)",
      });
    throw new SpoolError(
      "INVALID_INPUT",
      code === "EADDRINUSE"
        ? `port ${opts.port} on ${opts.host} is taken by another program`
        : `cannot serve on ${opts.host}:${opts.port}: ${error instanceof Error ? error.message : String(error)}`,
      { remediation: "pick another with --port N (or --port 0 for any free one)" },
    );
  }
  const port = server.port ?? opts.port;
  // A port of 0 is known only now: the Host check needs the real one.
  if (port !== opts.port) guard = { ...guardFor(opts.host, port, opts.readOnly), token: guard.token, csrf: guard.csrf };
  const shown = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${shown}:${port}/?token=${guard.token}`,
    port,
    get guard() {
      return guard;
    },
    async stop() {
      await server.stop(true);
    },
  };
}
