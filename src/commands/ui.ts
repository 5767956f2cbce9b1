/**
 * `spoolctl ui`: the queue in a browser (README "The web view",
 * docs/architecture.md "The web view"). Opens the queue once, hands the web
 * server a runner of the same verbs the CLI runs, prints the URL with its
 * token, and serves until SIGINT/SIGTERM.
 */
import { buildEnvelope, type VerbResult } from "../contract/envelope.ts";
import type { UiData } from "../describe/schemas-reports.ts";
import { redactUrl } from "../store/postgres/url.ts";
import { writeOut } from "../ui/stdio.ts";
import { isLoopback } from "../web/security.ts";
import { startWebServer } from "../web/server.ts";
import { scrape } from "./metrics.ts";
import { runVerbJson } from "./run-verb.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/** The port `ui` binds unless told (`--port 0`: any free one). */
const DEFAULT_PORT = "7077";

/** Opens `url` in the desktop's browser, if there is one; says so when there is not. */
function openInBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  if (!Bun.which(opener)) {
    process.stderr.write(`spoolctl ui: --open found no ${opener} here; open the URL yourself\n`);
    return;
  }
  Bun.spawn([opener, url], { stdio: ["ignore", "ignore", "ignore"] }).unref();
}

export default defineVerb({
  name: "ui",
  description:
    "Serve the queue in a browser: overview, jobs with search and bulk actions, job pages with live output and dependency graphs, triage by failure group, batches, lanes, schedules, hooks and workers. Binds 127.0.0.1 and prints a URL with a random token; every write goes through the same verbs as the CLI. Ctrl-C stops it.",
  examples: [
    "spoolctl ui",
    "spoolctl ui --port 0 --open",
    "spoolctl ui --read-only --db postgres://queue.internal/jobs",
    "spoolctl ui --host 0.0.0.0 --port 7077   # other machines too: anyone with the token can act",
  ],
  flags: {
    ...COMMON_FLAGS,
    port: {
      type: "string",
      description: `port to serve on (0: any free port; default ${DEFAULT_PORT})`,
      valueHint: "N",
      valueType: "integer",
      default: DEFAULT_PORT,
      min: 0,
      max: 65535,
    },
    host: {
      type: "string",
      description: "address to bind (default 127.0.0.1, this machine only; another address is said loudly)",
      valueHint: "ADDR",
      default: "127.0.0.1",
    },
    "read-only": { type: "boolean", description: "refuse every write (403) and draw no action button" },
    open: { type: "boolean", description: "open the URL in the desktop's browser" },
    "metrics-token": {
      type: "string",
      description: "a second token that reads /metrics only (Authorization: Bearer TOKEN), for a Prometheus scrape",
      valueHint: "TOKEN",
    },
  },
  mutates: true,
  async run(ctx): Promise<VerbResult<UiData>> {
    const readOnly = ctx.args["read-only"] === true;
    // Like a worker, it may start before the first job: it creates the queue, unless it only reads.
    const store = await ctx.open({ create: !readOnly, readOnly, overlapping: true });
    const db = typeof ctx.raw.values.db === "string" ? ctx.raw.values.db : undefined;
    const location = ctx.location();
    const server = startWebServer({
      host: ctx.args.host,
      port: ctx.args.port,
      readOnly,
      store,
      queueLabel: location.dbPath.includes("://") ? redactUrl(location.dbPath) : location.dbPath,
      metrics: {
        token: ctx.args["metrics-token"],
        scrape: async (openmetrics) => scrape(store, openmetrics),
      },
      runner: {
        spec: (name) => ctx.loadVerb(name).catch(() => null),
        run: async (name, args) =>
          runVerbJson(await ctx.loadVerb(name), args, { store, db, catalog: ctx.catalog, loadVerb: ctx.loadVerb }),
      },
    });
    // Before the URL is printed: whoever reads it may stop us at once, and that must be a clean stop.
    const stopped = new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    const data: UiData = { url: server.url, host: ctx.args.host, port: server.port, read_only: readOnly };
    // The envelope comes first, as soon as the URL is known: the server then runs until stopped.
    if (ctx.json) writeOut(`${JSON.stringify(buildEnvelope(performance.now(), { data }))}\n`);
    else {
      writeOut(
        `spoolctl ui: serving ${location.dbPath.includes("://") ? redactUrl(location.dbPath) : location.dbPath}${readOnly ? " read-only" : ""}\n  ${server.url}\n(Ctrl-C stops it)\n`,
      );
    }
    if (!isLoopback(ctx.args.host))
      process.stderr.write(
        `spoolctl ui: WARNING: serving on ${ctx.args.host}, not this machine's loopback: anyone who can reach it and has the token can ${readOnly ? "read every job's command and output" : "retry, cancel and delete jobs"}; plain HTTP, so use it only on a network you trust\n`,
      );
    if (ctx.args.open) openInBrowser(server.url);
    await stopped;
    await server.stop();
    if (!ctx.json) process.stderr.write("spoolctl ui: stopped\n");
    return { data, streamed: true };
  },
  render: () => "",
});
