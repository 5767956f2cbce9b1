/**
 * The web view's only script and stylesheet (docs/architecture.md "The web
 * view"): plain JavaScript and CSS of our own, shipped inside the bundle, so
 * there is no build step and nothing is fetched from elsewhere. The script
 * turns the pages' buttons and forms into API calls (CSRF header, preview,
 * confirmation), follows the ledger over SSE without moving rows the reader
 * looks at, pauses while the tab is hidden, and tails running output.
 */

/** The script, served at `/assets/app.js`. */
export const APP_JS = `"use strict";
(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var main = document.getElementById("main");
  var toast = document.getElementById("toast");
  var dialog = document.getElementById("confirm");
  var busy = false;
  var leaving = false;

  function say(text, bad) {
    toast.textContent = text;
    toast.className = bad ? "bad shown" : "shown";
    clearTimeout(say.t);
    say.t = setTimeout(function () { toast.className = ""; }, 8000);
  }

  function api(verb, params) {
    return fetch("/api/" + encodeURIComponent(verb) + "?" + params, {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      credentials: "same-origin",
    }).then(function (r) {
      return r.json().then(function (env) { return { status: r.status, env: env }; });
    });
  }

  function ask(text, okLabel) {
    return new Promise(function (resolve) {
      document.getElementById("confirm-text").textContent = text;
      document.getElementById("confirm-ok").textContent = okLabel || "Confirm";
      dialog.returnValue = "";
      dialog.addEventListener("close", function once() {
        dialog.removeEventListener("close", once);
        resolve(dialog.returnValue === "ok");
      });
      dialog.showModal();
      document.getElementById("confirm-ok").focus();
    });
  }

  function errorText(env) {
    var e = (env.errors || [])[0];
    return e ? e.code + ": " + e.message + (e.remediation ? " — " + e.remediation : "") : "failed";
  }

  function summary(verb, env) {
    var d = env.data || {};
    var n = typeof d.count === "number" ? d.count : Array.isArray(d.jobs) ? d.jobs.length : null;
    var warn = (env.warnings || []).map(function (w) { return w.message; }).join(" ");
    return verb + ": done" + (n !== null ? " (" + n + " job" + (n === 1 ? "" : "s") + ")" : "") + (warn ? ". " + warn : "");
  }

  function run(verb, params, opts) {
    opts = opts || {};
    var go = Promise.resolve(true);
    if (opts.preview) {
      go = api(verb, params + "&dry-run=true").then(function (res) {
        if (!res.env.ok) { say(errorText(res.env), true); return false; }
        var n = res.env.data.count;
        if (!n) { say("No job matches.", false); return false; }
        var closed = res.env.data.closed || [];
        var closes = closed.length ? " It closes " + closed.length + " dependent" + (closed.length === 1 ? "" : "s") + " (" + closed.slice(0, 20).join(", ") + (closed.length > 20 ? ", …" : "") + ")." : "";
        var text = (opts.confirm || "Go ahead with {jobs}?").replace("{count}", n).replace("{jobs}", n + (n === 1 ? " job" : " jobs"));
        return ask(text + closes, verb + " " + n);
      });
    } else if (opts.confirm) {
      go = ask(opts.confirm, verb);
    }
    // Deleting the job this page shows: no redraw of a page that is about to be gone, then the list.
    var own = verb === "delete" && /^[/]jobs[/][0-9]+$/.test(location.pathname);
    return go.then(function (yes) {
      if (!yes) return;
      if (own) leaving = true;
      return api(verb, params).then(function (res) {
        if (res.status === 428 && opts.confirmFlags) {
          return ask(errorText(res.env), "Confirm").then(function (again) {
            if (!again) return;
            return api(verb, params + "&" + opts.confirmFlags).then(finish);
          });
        }
        return finish(res);
      });
    });
    function finish(res) {
      if (own && res.env.ok) { location.assign("/jobs"); return; }
      leaving = false;
      if (res.env.ok) say(summary(verb, res.env), false);
      else say(errorText(res.env), true);
      refresh(true);
    }
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.action");
    if (!b) return;
    ev.preventDefault();
    run(b.dataset.verb, b.dataset.params || "", {
      preview: b.dataset.preview === "true",
      confirm: b.dataset.confirm,
      confirmFlags: b.dataset.confirmFlags,
    });
  });

  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (!f.classList || !f.classList.contains("verb-form")) return;
    ev.preventDefault();
    var params = new URLSearchParams(f.dataset.params || "");
    new FormData(f).forEach(function (v, k) { if (String(v).trim()) params.append(k, String(v).trim()); });
    run(f.dataset.verb, params.toString(), {});
  });

  // Earlier output, a window at a time: never the whole file.
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.load-earlier");
    if (!b) return;
    var q = new URLSearchParams({ id: b.dataset.job, attempt: b.dataset.attempt, stream: b.dataset.stream, before: b.dataset.before });
    fetch("/output?" + q, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (w) {
      var pre = document.getElementById("out-" + b.dataset.stream);
      pre.insertBefore(document.createTextNode(w.text), pre.firstChild);
      pre.dataset.expanded = "true";
      if (w.offset > 0) { b.dataset.before = w.offset; b.textContent = "Load earlier output (" + w.offset + " bytes before)"; }
      else b.remove();
    });
  });

  var tails = [];
  function startTails() {
    tails.forEach(function (t) { t.close(); });
    tails = [];
    document.querySelectorAll("pre[data-tail]").forEach(function (pre) {
      var q = new URLSearchParams({ id: pre.dataset.job, attempt: pre.dataset.attempt, stream: pre.dataset.stream, from: pre.dataset.from });
      var es = new EventSource("/live/output?" + q);
      es.addEventListener("output", function (ev) {
        var d = JSON.parse(ev.data);
        var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        pre.appendChild(document.createTextNode(d.text));
        pre.dataset.from = d.end;
        if (atEnd) pre.scrollTop = pre.scrollHeight;
      });
      es.addEventListener("end", function () { es.close(); delete pre.dataset.tail; });
      tails.push(es);
    });
  }

  // Redraws the page's main part in place, unless the reader is busy with it.
  function refresh(force) {
    if (busy || leaving || dialog.open) return;
    if (!force && (document.querySelector("pre[data-expanded]") || (document.activeElement && main.contains(document.activeElement) && /INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)))) return;
    busy = true;
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, "text/html");
      var fresh = doc.getElementById("main");
      if (fresh) { main.innerHTML = fresh.innerHTML; startTails(); }
    }).finally(function () { busy = false; });
  }

  // The list the reader looks at stays put: new jobs are counted in a bar.
  var bar = document.getElementById("new-bar");
  document.getElementById("new-show").addEventListener("click", function () { location.reload(); });
  function countNew() {
    var list = document.getElementById("job-list");
    if (!list) return;
    var first = Number(list.dataset.firstId || 0);
    fetch("/api/list?" + list.dataset.filters + (list.dataset.filters ? "&" : "") + "limit=200", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (env) {
        if (!env.ok) return;
        var n = env.data.jobs.filter(function (j) { return j.id > first; }).length;
        if (n > 0) { bar.hidden = false; document.getElementById("new-show").textContent = (n >= 200 ? "200+" : n) + " new — show"; }
      });
  }

  var mode = document.body.dataset.live;
  var es = null;
  var cursor = null;
  var state = document.getElementById("live-state");
  function connect() {
    if (mode === "none" || es) return;
    es = new EventSource("/live" + (cursor !== null ? "?since=" + cursor : ""));
    es.addEventListener("hello", function (ev) { cursor = JSON.parse(ev.data).cursor; state.textContent = "live"; });
    es.addEventListener("change", function (ev) {
      cursor = JSON.parse(ev.data).cursor;
      if (mode === "bar") countNew(); else refresh(false);
    });
    es.onerror = function () { state.textContent = "reconnecting…"; };
  }
  function disconnect() {
    if (es) { es.close(); es = null; }
    state.textContent = mode === "none" ? "" : "paused";
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) disconnect();
    else { connect(); if (mode === "replace") refresh(false); else if (mode === "bar") countNew(); }
  });
  if (!document.hidden) connect();
  startTails();
})();
`;

/** The stylesheet, served at `/assets/app.css`. */
export const APP_CSS = `
:root { --fg: #1d232b; --muted: #5b6672; --bg: #fff; --line: #d9dee4; --done: #1f7a3d; --dead: #b3261e; --canceled: #6b6f76; --queued: #245fb8; --running: #8a5a00; --scheduled: #6a3fb5; --held: #3d4f8a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px; z-index: 9; }
header { display: flex; gap: 16px; align-items: center; padding: 8px 16px; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header ul { display: flex; gap: 4px; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
header a { padding: 4px 8px; border-radius: 4px; color: var(--fg); text-decoration: none; }
header a[aria-current="page"] { background: #e8eef7; font-weight: 600; }
.queue { color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; }
#live-state { margin-left: auto; color: var(--muted); font-size: 12px; }
main { padding: 8px 16px 48px; max-width: 1400px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 24px; } h3 { font-size: 14px; }
a { color: #1a56a8; } :focus-visible { outline: 2px solid #1a56a8; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
caption { text-align: left; color: var(--muted); font-size: 12px; padding: 4px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.cmd { font-family: ui-monospace, monospace; max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.err, dd.err { color: var(--dead); max-width: 320px; overflow-wrap: anywhere; }
td.detail { font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: anywhere; }
.state { display: inline-block; padding: 0 6px; border-radius: 8px; color: #fff; font-size: 12px; background: var(--muted); }
.s-done { background: var(--done); } .s-dead, .s-failed { background: var(--dead); } .s-canceled, .s-abandoned { background: var(--canceled); }
.s-queued { background: var(--queued); } .s-running { background: var(--running); } .s-scheduled { background: var(--scheduled); } .s-held { background: var(--held); } .s-succeeded { background: var(--done); }
.counts { display: flex; gap: 16px; list-style: none; padding: 0; flex-wrap: wrap; }
.counts a { text-decoration: none; color: var(--fg); } .counts .n { font-size: 20px; font-weight: 600; margin-left: 4px; }
.alert { background: #fdecea; border: 1px solid #f1b0aa; padding: 8px; border-radius: 4px; }
.chart svg { width: 100%; height: 120px; background: #fafbfc; border: 1px solid var(--line); }
.bar-done { fill: var(--done); background: var(--done); } .bar-dead { fill: var(--dead); background: var(--dead); } .bar-canceled { fill: var(--canceled); background: var(--canceled); }
.legend .key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; align-items: end; margin: 8px 0; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 3px 6px; }
button { border: 1px solid #b7c0ca; background: #f4f6f8; border-radius: 4px; cursor: pointer; }
button.danger { border-color: #e0a39e; background: #fdf0ef; color: var(--dead); }
.bulk, .actions { margin: 8px 0; display: flex; gap: 8px; flex-wrap: wrap; }
.tag { display: inline-block; background: #eef1f4; border-radius: 4px; padding: 0 4px; font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
pre.output, pre.sample { background: #0f1419; color: #e6e6e6; padding: 8px; max-height: 420px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
.group { border: 1px solid var(--line); border-radius: 6px; padding: 4px 12px; margin: 12px 0; }
.group .count { display: inline-block; min-width: 2em; padding: 0 6px; background: var(--dead); color: #fff; border-radius: 8px; text-align: center; }
.graph { overflow: auto; } .graph svg { max-width: none; }
.graph rect { stroke: #333; stroke-width: 1; } .graph rect.focus { stroke-width: 3; }
.graph text { font: 12px system-ui, sans-serif; fill: #fff; } .graph text.sub { font-size: 11px; opacity: 0.9; }
.graph .edge { fill: none; stroke: #7a8591; stroke-width: 1.5; } .graph marker path { fill: #7a8591; }
.n-done { fill: var(--done); } .n-dead { fill: var(--dead); } .n-canceled { fill: var(--canceled); } .n-queued { fill: var(--queued); } .n-running { fill: var(--running); }
#new-bar { position: sticky; top: 0; text-align: center; padding: 4px; background: #fff8e1; border-bottom: 1px solid #f0d890; z-index: 2; }
#toast { position: fixed; bottom: 16px; right: 16px; max-width: 480px; padding: 8px 12px; border-radius: 6px; background: #1d232b; color: #fff; opacity: 0; transition: opacity .2s; pointer-events: none; }
#toast.shown { opacity: 1; } #toast.bad { background: var(--dead); }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: 520px; } dialog menu { display: flex; gap: 8px; justify-content: end; padding: 0; }
.badge.ro { background: #fff3cd; border: 1px solid #e6c65c; padding: 0 6px; border-radius: 8px; font-size: 12px; }
.empty { color: var(--muted); } .next { display: inline-block; margin-top: 8px; }
.wstate { font-weight: 600; } .w-stopped { color: var(--muted); } .w-lease_expired, .w-dead { color: var(--dead); }
`;
