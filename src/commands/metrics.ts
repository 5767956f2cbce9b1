/**
 * `spoolctl metrics`: the queue's metrics in the Prometheus text format (or
 * OpenMetrics), from one read snapshot; `--serve ADDR` answers scrapes at
 * `/metrics` until SIGINT/SIGTERM (README "Metrics and traces").
 */

import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import type { MetricsData } from "../describe/schemas-reports.ts";
import { CONTENT_TYPES, renderExposition } from "../ops/metrics.ts";
import type { Store } from "../store/store.ts";
import { metricsSnapshot } from "../store/verbs/metrics.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** The exposition of `store` now (Prometheus text, or OpenMetrics with `openmetrics`). */
export async function scrape(store: Store, openmetrics: boolean): Promise<string> {
  const snap = await metricsSnapshot(store, judgeRecord, healthContext(store), TOOL_VERSION, store.driver);
  return renderExposition(snap, openmetrics);
}

/** Where `--serve` without a value listens: loopback, the port Prometheus' exporter registry suggests for it. */
const DEFAULT_ADDRESS = "127.0.0.1:9464";

/** `HOST:PORT` of `--serve`, or INVALID_INPUT naming the value. */
function parseAddress(value: string): { hostname: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535)
    throw new SpoolError("INVALID_INPUT", `--serve ${JSON.stringify(value)} is not HOST:PORT`, {
      remediation: "give an address such as --serve 127.0.0.1:9464 (port 0..65535)",
    });
  return { hostname: m[1]!.replace(/^\[|\]$/g, "") || "127.0.0.1", port };
}

export default defineVerb({
  name: "metrics",
  description:
    "Print the queue's metrics once in the Prometheus text format (OpenMetrics with --openmetrics), from one read snapshot; --serve ADDR answers scrapes at /metrics.",
  examples: [
    "spoolctl metrics > /var/lib/node_exporter/textfile/spoolctl.prom",
    "spoolctl metrics --openmetrics",
    "spoolctl metrics --serve",
    "spoolctl metrics --serve 0.0.0.0:9464",
  ],
  flags: {
    ...COMMON_FLAGS,
    openmetrics: { type: "boolean", description: "print OpenMetrics 1.0 instead of the Prometheus text format 0.0.4" },
    serve: {
      type: "string",
      description:
        "answer scrapes at http://ADDR/metrics until SIGINT/SIGTERM (ADDR HOST:PORT, default 127.0.0.1:9464)",
      valueHint: "ADDR",
      optionalValue: true,
    },
  },
  async run(ctx): Promise<VerbResult<MetricsData>> {
    const openmetrics = ctx.args.openmetrics === true;
    const format: MetricsData["format"] = openmetrics ? "openmetrics" : "prometheus";
    if (ctx.args.serve === undefined) {
      const store = await ctx.open({ create: false });
      return { data: { format, content_type: CONTENT_TYPES[format], text: await scrape(store, openmetrics) } };
    }
    const given = ctx.args.serve === "" ? DEFAULT_ADDRESS : ctx.args.serve;
    const { hostname, port } = parseAddress(given);
    const store = await ctx.open({ create: false });
    let served = 0;
    let server: ReturnType<typeof Bun.serve>;
    try {
      server = Bun.serve({
        hostname,
        port,
        async fetch(req) {
          const url = new URL(req.url);
          if (url.pathname !== "/metrics") return new Response("not found: scrape /metrics\n", { status: 404 });
          // A scraper that asks for OpenMetrics gets it (Prometheus does by default).
          const om = openmetrics || (req.headers.get("accept") ?? "").includes("application/openmetrics-text");
          try {
            const text = await scrape(store, om);
            served++;
            return new Response(text, {
              headers: { "content-type": CONTENT_TYPES[om ? "openmetrics" : "prometheus"] },
            });
          } catch (error) {
            return new Response(`spoolctl: scrape failed: ${(error as Error).message}\n`, { status: 503 });
          }
        },
      });
    } catch (error) {
      // A taken port or an address of another machine is the user's to change, not our fault.
      const code = (error as { code?: string }).code;
      throw new SpoolError(
        "INVALID_INPUT",
        code === "EADDRNOTAVAIL"
          ? `cannot listen on ${given}: it is not an address of this machine`
          : code === "EADDRINUSE"
            ? `cannot listen on ${given}: the port is taken by another program`
            : `cannot listen on ${given}: ${(error as Error).message}`,
        { remediation: "choose a free address of this machine with --serve HOST:PORT (e.g. 127.0.0.1:9464)" },
      );
    }
    process.stderr.write(
      `spoolctl: serving metrics at http://${given.replace(/:\d+$/, `:${server.port}`)}/metrics; Ctrl-C to stop\n`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    server.stop(true);
    return { data: { format, content_type: CONTENT_TYPES[format], served, address: `${hostname}:${server.port}` } };
  },
  render({ data }) {
    return data.text !== undefined ? data.text.replace(/\n$/, "") : `spoolctl: served ${data.served ?? 0} scrapes`;
  },
});
