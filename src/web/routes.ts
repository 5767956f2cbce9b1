/**
 * The pages by path (docs/architecture.md "The web view"): `/`, `/jobs`,
 * `/jobs/ID`, `/triage`, `/batches`, `/batches/NAME`, `/lanes`,
 * `/schedules`, `/hooks`, `/workers`. Each reads through the same verbs the
 * API serves ({@link PageContext.verb}), so a page shows what the CLI says.
 */
import { type ErrorCode, SpoolError } from "../contract/errors.ts";
import type { Store } from "../store/store.ts";
import { argsOfQuery, type VerbRunner } from "./api.ts";
import { hooksPage, lanesPage, schedulesPage, workersPage } from "./pages/admin.ts";
import { jobPage } from "./pages/job.ts";
import { jobsPage } from "./pages/jobs.ts";
import { layout, type Page, type PageContext } from "./pages/layout.ts";
import { overviewPage } from "./pages/overview.ts";
import { batchesPage, batchPage, triagePage } from "./pages/triage.ts";

/** What the pages read from. */
export interface RouteDeps {
  runner: VerbRunner;
  store: Store;
  readOnly: boolean;
  csrf: string;
  queueLabel: string;
}

/** The page at `path`, or null when there is none. */
function pageFor(path: string, ctx: PageContext): Promise<Page> | null {
  const rest = (prefix: string) => decodeURIComponent(path.slice(prefix.length));
  if (path === "/") return overviewPage(ctx);
  if (path === "/jobs") return jobsPage(ctx);
  if (path.startsWith("/jobs/") && path.length > 6) return jobPage(ctx, rest("/jobs/"));
  if (path === "/triage") return triagePage(ctx);
  if (path === "/batches") return batchesPage(ctx);
  if (path.startsWith("/batches/") && path.length > 9) return batchPage(ctx, rest("/batches/"));
  if (path === "/lanes") return lanesPage(ctx);
  if (path === "/schedules") return schedulesPage(ctx);
  if (path === "/hooks") return hooksPage(ctx);
  if (path === "/workers") return workersPage(ctx);
  return null;
}

/** Renders the page at `path` as an HTML response, or null when no page is there. Raises the error of a verb it read. */
export async function routePage(path: string, url: URL, deps: RouteDeps): Promise<Response | null> {
  const ctx: PageContext = {
    store: deps.store,
    url,
    readOnly: deps.readOnly,
    csrf: deps.csrf,
    queueLabel: deps.queueLabel,
    async verb(name, params = {}) {
      const spec = await deps.runner.spec(name);
      if (!spec) throw new SpoolError("INTERNAL", `the page reads verb ${name}, which does not exist`);
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(params))
        for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) query.append(k, one);
      const { envelope } = await deps.runner.run(name, argsOfQuery(spec, query));
      const error = envelope.errors[0];
      if (error)
        throw new SpoolError(error.code as ErrorCode, error.message, { remediation: error.remediation ?? undefined });
      return envelope.data;
    },
  };
  const page = pageFor(path, ctx);
  if (page === null) return null;
  return new Response(layout(await page, ctx, path), { headers: { "content-type": "text/html; charset=utf-8" } });
}
