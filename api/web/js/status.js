// The node's status: the summary at the top, what keeps the node from
// being ready, and the Node view's figures (files, queues, scan, data
// directory).

import { $, el, fmtBytes, plural, codeList } from "./dom.js";
import { api } from "./client.js";
import { renderReachability, renderPeers } from "./peers.js";
import { statusChanged } from "./library.js";

// lastStatus is the node's last status (GET /api/status).
export let lastStatus = null;

// filesText counts the files as the catalog holds them: local ones and
// those known only from peers, apart.
export function filesText(st) {
  const f = st.files || {};
  if (!f.loaded) return plural(st.roots ?? 0, "file") + " (counting…)";
  return plural(f.local, "local file") + " · " + f.fromPeers + " known from peers";
}

// settling reports whether the node's figures still move without an
// event: a scan's bytes, or the files still being counted.
export function settling(st) {
  const busy = st.scan && !["watching", "polling", "idle"].includes(st.scan.state);
  return busy || !(st.files && st.files.loaded);
}

// refreshNode reads the node's status and peers and shows them.
export async function refreshNode() {
  const [st, ps] = await Promise.all([api("/api/status"), api("/api/peers")]);
  renderStatus(st);
  renderPeers((ps && ps.peers) || []);
  return st;
}

export function renderStatus(st) {
  lastStatus = st;
  $("peer-id").textContent = st.peerId || "";
  $("node-name").textContent = st.name || "";
  $("header-name").textContent = st.name || "";
  $("header-name").title = st.peerId || "";
  $("files").textContent = filesText(st);
  codeList("addrs", st.addrs || [], "none");
  $("roots").textContent = String(st.roots ?? "");
  $("provide-queue").textContent = String(st.provideQueue ?? "");
  $("hash-queue").textContent = String(st.hashQueue ?? "");
  renderScan(st);
  $("summary").textContent = "Version " + (st.version || "?") + " · " + filesText(st) + " · " +
    plural(st.peers ?? 0, "peer") + (st.redis && !st.redis.ok ? " · Redis is down" : "") +
    (st.dataDir && st.dataDir.full ? " · data directory full" : "");
  renderProblems(st);
  renderReachability(st);
  statusChanged(st);
}

// renderScan shows the scan: while it runs, its progress; after it, the
// library's files as they are (libraryFiles: however they came in, the
// watcher's too).
function renderScan(st) {
  const sc = st.scan || {};
  $("scan-state").textContent = sc.state || "";
  const done = (sc.bytesDone || 0) + (sc.bytesInFlight || 0);
  const total = sc.bytesTotal || 0;
  const p = $("scan-progress");
  p.max = total > 0 ? total : 1;
  p.value = total > 0 ? Math.min(done, total) : (sc.state === "watching" || sc.state === "polling" || sc.state === "idle" ? 1 : 0);
  const scanning = sc.state === "scanning" || sc.state === "hashing";
  $("scan-text").textContent = (scanning || typeof st.libraryFiles !== "number"
    ? (sc.filesDone ?? 0) + " / " + plural(sc.filesTotal ?? 0, "file") + " scanned, " + fmtBytes(Math.min(done, total || done)) + " / " + fmtBytes(total)
    : plural(st.libraryFiles, "file") + " in the library") +
    (sc.errors ? ", " + plural(sc.errors, "error") : "") +
    (sc.hashed && !scanning ? " · " + plural(sc.hashed, "file") + " hashed since the scan began" : "");
}

// renderProblems shows, above every view, what keeps the node from being
// ready (a full data directory, …), as /ready says it; and, in the Node
// view, the data directory and the space left there.
function renderProblems(st) {
  const problems = st.problems || [];
  const ul = $("problems");
  ul.replaceChildren(...problems.map((p) => el("li", {}, p)));
  ul.hidden = problems.length === 0;
  const d = st.dataDir || {};
  const dd = $("data-dir");
  dd.dataset.full = d.full ? "true" : "false";
  dd.replaceChildren(el("code", {}, d.path || ""),
    el("span", { class: d.full ? "error" : "muted" }, d.error ? " · free space unknown: " + d.error
      : d.full ? " · full: " + fmtBytes(d.freeBytes) + " free, under the " + fmtBytes(d.minFreeBytes) + " the node needs; new files wait until space is freed"
      : " · " + fmtBytes(d.freeBytes) + " free"));
}
