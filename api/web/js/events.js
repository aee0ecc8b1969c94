// Keeping the page up to date: the node's server-sent events (GET
// /api/events) when it can, else polling every 3 s; the Node view's
// recent events.

import { $, el } from "./dom.js";
import { hasToken } from "./client.js";
import { recordLink } from "./nav.js";
import { reloadList } from "./library.js";
import { lastStatus, filesText, settling, refreshNode } from "./status.js";

let live = "";        // "events" or "polling"
let pollTimer = 0;
let refreshTimer = 0;
let peersTimer = 0;   // with events: peers and reachability change without one

// EVENT_WORDS say a path's change as the node's log does; the key-set
// events of the same change (mint, confirm, …) are not shown: one line a
// file.
const EVENT_WORDS = { add: "added", change: "changed", delete: "deleted", rename: "renamed" };

// startUpdates keeps the page up to date after the first status st (null
// when the node did not answer).
export function startUpdates(st) {
  // EventSource cannot send a token: with one, poll instead.
  if (st && !hasToken()) startEvents();
  else startPolling(hasToken() ? "the API needs a token" : "the node did not answer");
  if (st && settling(st)) scheduleRefresh();
}

// scheduleRefresh reloads the node's state soon, at most every 300 ms.
function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = 0;
    try {
      const st = await refreshNode();
      reloadList();
      if (settling(st) && live === "events") scheduleRefresh(); // bytes move between events
    } catch (e) { /* shown on the next poll */ }
  }, 300);
}

function startPolling(why) {
  live = "polling";
  if (peersTimer) { clearInterval(peersTimer); peersTimer = 0; }
  $("live-mode").textContent = "polling every 3 s (" + why + ")";
  if (pollTimer) return;
  pollTimer = setInterval(async () => {
    const before = filesText(lastStatus || {});
    try {
      const st = await refreshNode();
      if (filesText(st) !== before) reloadList(); // files came or went
    } catch (e) {
      $("live-mode").textContent = "polling: " + e.message;
    }
  }, 3000);
}

function startEvents() {
  if (!window.EventSource) { startPolling("this browser has no EventSource"); return; }
  const es = new EventSource("/api/events");
  es.onopen = () => {
    live = "events";
    $("live-mode").textContent = "live (server-sent events)";
    if (!peersTimer) peersTimer = setInterval(scheduleRefresh, 10000);
  };
  es.onmessage = (m) => {
    try { addEvent(JSON.parse(m.data)); } catch (e) { /* not an event */ }
    scheduleRefresh();
  };
  es.addEventListener("reset", () => scheduleRefresh());
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) startPolling("the event stream is not available");
    else $("live-mode").textContent = "reconnecting…";
  };
}

// libraryPath is p relative to the library folder that holds it.
function libraryPath(p) {
  for (const lib of (lastStatus && lastStatus.libraries) || []) {
    const dir = lib.endsWith("/") ? lib : lib + "/";
    if (typeof p === "string" && p.startsWith(dir)) return p.slice(dir.length);
  }
  return p || "";
}

function addEvent(e) {
  const words = EVENT_WORDS[e.type];
  if (!words) return;
  const list = $("events");
  const item = el("li", { "data-type": e.type }, words + " ",
    e.type === "rename" ? libraryPath(e.oldPath) + " → " + libraryPath(e.path) : libraryPath(e.path));
  if (e.cid && e.type !== "delete") item.append(" ", recordLink(e.cid, { class: "open" }, "open"));
  list.prepend(item);
  while (list.children.length > 20) list.lastChild.remove();
}
