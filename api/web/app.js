// MetaMesh web page: plain JavaScript against the node's HTTP API.
// Text from the API is only ever set with textContent, never as HTML.
"use strict";

const TOKEN_KEY = "metamesh.token";
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem(TOKEN_KEY) || "";
let tokenWaiters = null; // pending askToken promise callbacks

// el builds an element with attributes and children (strings become text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function fmtBytes(n) {
  if (typeof n !== "number" || !isFinite(n)) return "";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + u[i];
}

function pad2(n) { return String(n).padStart(2, "0"); }

// plural counts: plural(1, "peer") is "1 peer", plural(2, "address",
// "addresses") "2 addresses".
function plural(n, one, many) {
  return n + " " + (n === 1 ? one : (many || one + "s"));
}

// fmtTime shows an RFC 3339 time in the browser's locale (as given when it
// does not parse).
function fmtTime(s) {
  const d = new Date(s);
  return isNaN(d.getTime()) ? String(s) : d.toLocaleString();
}

// askToken shows the token form once and resolves when it is submitted;
// concurrent callers share the same prompt.
function askToken(why) {
  if (tokenWaiters) return tokenWaiters.promise;
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  tokenWaiters = { promise, resolve };
  $("token-why").textContent = why;
  $("token-section").hidden = false;
  $("token").focus();
  return promise;
}

$("token-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = $("token").value.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  $("token-section").hidden = true;
  const w = tokenWaiters;
  tokenWaiters = null;
  if (w) w.resolve();
});

// api fetches a JSON endpoint; a 401 asks for the token and retries.
async function api(path) {
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const resp = await fetch(path, { headers });
    if (resp.status === 401 && attempt < 3) {
      await askToken(token ? "That token was refused; enter the node's API token." :
        "This node needs its API token (the file --api-token-file names).");
      continue;
    }
    let body = null;
    try { body = await resp.json(); } catch (e) { body = null; }
    if (!resp.ok) {
      const err = new Error((body && body.error) || resp.status + " " + resp.statusText);
      err.status = resp.status;
      throw err;
    }
    return body;
  }
}

// ---- search ----

function hitLine(h) {
  const parts = [];
  if (h.year) parts.push(String(h.year));
  if (h.season !== undefined && h.season !== null && h.season !== "") {
    parts.push("S" + pad2(h.season) + (h.episode !== undefined && h.episode !== null && h.episode !== "" ? "E" + pad2(h.episode) : ""));
  }
  if (h.episodeTitle) parts.push(h.episodeTitle);
  if (h.fileType) parts.push(h.fileType);
  if (typeof h.size === "number") parts.push(fmtBytes(h.size));
  return parts.join(" · ");
}

async function search(q, federated) {
  const status = $("search-status");
  const list = $("results");
  status.textContent = "Searching…";
  list.replaceChildren();
  try {
    const res = await api("/api/search?q=" + encodeURIComponent(q) + (federated ? "&federated=1" : ""));
    const hits = res.hits || [];
    status.textContent = hits.length === 0 ? "Nothing found." :
      plural(hits.length, "result") + (federated ? " (asked " + plural((res.peers || []).length, "peer") + ")" : "");
    for (const h of hits) {
      list.append(el("li", { class: "hit" },
        el("button", { type: "button", class: "link title", "data-cid": h.cid, onclick: () => openRecord(h.cid) },
          h.title || "(untitled)"),
        el("div", { class: "muted" }, hitLine(h)),
        el("div", {}, el("code", { class: "cid", title: "canonical CID" }, h.cid)),
        el("div", { class: "muted" }, "from ", h.source === "local" ? "this node" : el("code", {}, h.source))));
    }
  } catch (e) {
    status.textContent = "Search failed: " + e.message;
  }
}

$("search-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  search($("q").value.trim(), $("federated").checked);
});

$("cid-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  openRecord($("cid").value.trim());
});

// ---- record ----

function asList(v) {
  if (Array.isArray(v)) return v.map(String);
  if (v && typeof v === "object") return Object.values(v).flatMap(asList);
  if (typeof v === "string" && v) return [v];
  return [];
}

function tree(v) {
  if (v && typeof v === "object") {
    const ul = el("ul");
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v).sort((a, b) => a[0].localeCompare(b[0]));
    for (const [k, x] of entries) {
      if (x && typeof x === "object") {
        ul.append(el("li", {}, el("details", { open: true }, el("summary", {}, k), tree(x))));
      } else {
        ul.append(el("li", {}, el("span", { class: "key" }, k), ": ", el("span", { class: "val" }, String(x))));
      }
    }
    return ul;
  }
  return el("span", { class: "val" }, String(v));
}

// playable is "video" or "audio" when this browser can play mime.
function playable(mime) {
  if (typeof mime !== "string") return "";
  const kind = mime.startsWith("video/") ? "video" : mime.startsWith("audio/") ? "audio" : "";
  if (!kind) return "";
  return document.createElement(kind).canPlayType(mime) ? kind : "";
}

let recordSeq = 0;

async function openRecord(cid) {
  if (!cid) return;
  const seq = ++recordSeq;
  const sec = $("record");
  sec.hidden = false;
  $("record-title").textContent = "Record";
  $("record-status").textContent = "Loading " + cid + "…";
  $("record-body").hidden = true;
  if (location.hash !== "#cid=" + cid) history.replaceState(null, "", "#cid=" + encodeURIComponent(cid));
  let doc;
  try {
    doc = await api("/api/meta/" + encodeURIComponent(cid));
  } catch (e) {
    if (seq === recordSeq) $("record-status").textContent = "Could not open " + cid + ": " + e.message;
    return;
  }
  const canonical = doc.canonical_cid || cid;
  const cids = [...new Set([canonical, ...asList(doc.cids)])];
  const infos = await Promise.all(cids.map((c) =>
    api("/api/cid/" + encodeURIComponent(c)).catch((e) => ({ input: c, codec: "?", tier: "?", rank: -1, problem: e.message }))));
  if (seq !== recordSeq) return;

  const title = (doc.titles && (doc.titles.eng || Object.values(doc.titles)[0])) || doc.originalTitle ||
    (typeof doc.filePath === "string" ? doc.filePath.split("/").pop() : "") || canonical;
  $("record-title").textContent = title;
  $("record-status").textContent = "";
  const bits = [];
  if (doc.mimeType) bits.push(doc.mimeType);
  if (typeof doc.sizeByte === "number") bits.push(fmtBytes(doc.sizeByte));
  if (doc.source) bits.push(doc.source === "local" ? "on this node" : "from peer " + doc.source);
  if (typeof doc.filePath === "string") bits.push(doc.filePath);
  $("record-summary").textContent = bits.join(" · ");

  // The poster (served by the node when it holds the image), the plot,
  // the subtitles by language.
  const poster = $("poster");
  poster.replaceChildren();
  const posterCID = doc.art && typeof doc.art.poster === "string" ? doc.art.poster : "";
  if (posterCID && doc.source === "local" && !token) {
    poster.append(el("img", { src: "/api/file/" + encodeURIComponent(posterCID), alt: "Poster of " + title, class: "poster" }));
  }
  const plot = doc.plot && typeof doc.plot === "object" ? (doc.plot.eng || Object.values(doc.plot)[0]) : "";
  $("plot").textContent = typeof plot === "string" ? plot : "";
  const subs = $("subtitles");
  subs.replaceChildren();
  const byLang = doc.subtitles && typeof doc.subtitles === "object" ? doc.subtitles : {};
  const flags = doc.subtitleflags && typeof doc.subtitleflags === "object" ? doc.subtitleflags : {};
  for (const lang of Object.keys(byLang).sort()) {
    asList(byLang[lang]).forEach((c, i) => {
      const fl = flags[lang]; // a list, or an object when only some have flags
      const f = Array.isArray(fl) ? fl[i] : (fl && typeof fl === "object" ? fl[String(i)] : "");
      const label = lang + (typeof f === "string" && f ? " (" + f + ")" : "");
      subs.append(el("li", { "data-lang": lang }, doc.source === "local"
        ? el("a", { href: "/api/file/" + encodeURIComponent(c) }, label) : label, " ", el("code", { class: "cid" }, c)));
    });
  }
  $("subtitles-part").hidden = subs.children.length === 0;

  const href = "/api/file/" + encodeURIComponent(canonical);
  const dl = $("download");
  dl.href = href;
  dl.textContent = "Download" + (typeof doc.sizeByte === "number" ? " (" + fmtBytes(doc.sizeByte) + ")" : "");
  dl.onclick = token ? (ev) => { ev.preventDefault(); downloadWithToken(href, title); } : null;

  const player = $("player");
  player.replaceChildren();
  const kind = playable(doc.mimeType);
  if (kind && !token) {
    player.append(el(kind, { controls: true, preload: "none", src: href, "aria-label": "Play " + title }));
  } else if (kind) {
    player.append(el("button", { type: "button", onclick: () => playWithToken(kind, href, title) }, "Load player"));
  }

  infos.sort((a, b) => (b.rank - a.rank) || String(a.input).localeCompare(String(b.input)));
  const tbody = $("cids").tBodies[0];
  tbody.replaceChildren();
  const learned = (doc.learned && typeof doc.learned === "object") ? doc.learned : {};
  for (const info of infos) {
    const c = info.normalized || info.input;
    const isCanon = c === canonical;
    // A CID only peers vouch for: this node holds it from their records.
    const from = doc.source === "local" ? asList(learned[c]) : [];
    const n = from.length;
    tbody.append(el("tr", { class: isCanon ? "canonical" : "", "data-cid": c, "aria-current": isCanon ? "true" : null },
      el("td", {}, el("code", { class: "cid" }, c), isCanon ? el("strong", { class: "badge" }, "canonical") : null,
        n > 0 ? el("div", { class: "muted learned" }, "from " + (n === 1 ? "1 peer's record" : n + " peers' records") + ", not this node's bytes: " + from.join(", ")) : null),
      el("td", {}, info.codec + (info.multihash ? " / " + info.multihash : "")),
      el("td", { class: "tier" }, info.tier),
      el("td", { class: "rank" }, String(info.rank), info.problem ? el("div", { class: "muted" }, info.problem) : null)));
  }

  const listInto = (id, items, empty) => {
    const ul = $(id);
    ul.replaceChildren();
    if (items.length === 0) ul.append(el("li", { class: "muted" }, empty));
    for (const it of items) ul.append(el("li", {}, el("code", {}, it)));
  };
  listInto("providers", asList(doc.providers), "none known");
  const dups = asList(doc.duplicates);
  listInto("duplicates", dups, "none");
  if (typeof doc.duplicateCount === "number" && doc.duplicateCount > dups.length) {
    $("duplicates").append(el("li", { class: "muted" }, "… " + (doc.duplicateCount - dups.length) + " more"));
  }
  $("tree").replaceChildren(tree(doc));
  $("record-body").hidden = false;
}

async function fetchBlob(href) {
  const resp = await fetch(href, { headers: { Authorization: "Bearer " + token } });
  if (!resp.ok) throw new Error(resp.status + " " + resp.statusText);
  return URL.createObjectURL(await resp.blob());
}

async function downloadWithToken(href, name) {
  try {
    const url = await fetchBlob(href);
    const a = el("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (e) {
    $("record-status").textContent = "Download failed: " + e.message;
  }
}

async function playWithToken(kind, href, title) {
  try {
    const url = await fetchBlob(href);
    $("player").replaceChildren(el(kind, { controls: true, src: url, "aria-label": "Play " + title }));
  } catch (e) {
    $("record-status").textContent = "Could not load the file: " + e.message;
  }
}

// ---- node ----

let live = "";        // "events" or "polling"
let pollTimer = 0;
let refreshTimer = 0;
let peersTimer = 0;   // with events: peers and reachability change without one

function renderStatus(st) {
  $("peer-id").textContent = st.peerId || "";
  codeList("addrs", st.addrs || [], "none");
  $("roots").textContent = String(st.roots ?? "");
  $("provide-queue").textContent = String(st.provideQueue ?? "");
  $("hash-queue").textContent = String(st.hashQueue ?? "");
  const sc = st.scan || {};
  $("scan-state").textContent = sc.state || "";
  const done = (sc.bytesDone || 0) + (sc.bytesInFlight || 0);
  const total = sc.bytesTotal || 0;
  const p = $("scan-progress");
  p.max = total > 0 ? total : 1;
  p.value = total > 0 ? Math.min(done, total) : (sc.state === "watching" || sc.state === "polling" || sc.state === "idle" ? 1 : 0);
  $("scan-text").textContent = (sc.filesDone ?? 0) + " / " + plural(sc.filesTotal ?? 0, "file") + ", " +
    fmtBytes(Math.min(done, total || done)) + " / " + fmtBytes(total) +
    (sc.errors ? ", " + plural(sc.errors, "error") : "");
  $("summary").textContent = "Version " + (st.version || "?") + " · " + plural(st.roots ?? 0, "file") + " · " +
    plural(st.peers ?? 0, "peer") + (st.redis && !st.redis.ok ? " · Redis is down" : "");
  renderReachability(st);
}

// What each reachability (AutoNAT v2) means for the household's peers.
const REACHABILITY = {
  public: "peers can dial this node",
  private: "behind NAT or a firewall: peers reach it through a relay",
  unknown: "not found out yet",
};

// codeList fills the list id with one <code> item per entry, or a muted
// item saying empty.
function codeList(id, items, empty) {
  $(id).replaceChildren(...(items.length === 0 ? [el("li", { class: "muted" }, empty)] :
    items.map((a) => el("li", {}, el("code", {}, a)))));
}

// renderReachability shows how peers reach the node: its reachability,
// the addresses confirmed dialable, its relays and reservations, and
// whether it relays for others.
function renderReachability(st) {
  const r = st.reachability || "unknown";
  const dd = $("reachability");
  dd.dataset.reachability = r;
  dd.replaceChildren(el("strong", {}, r), REACHABILITY[r] ? el("span", { class: "muted" }, " · " + REACHABILITY[r]) : null);
  codeList("reachable-addrs", st.reachableAddrs || [], "none confirmed");
  const relays = st.relays || [];
  $("relays").replaceChildren(...(relays.length === 0 ? [el("li", { class: "muted" }, "none")] : relays.map(relayItem)));
  $("relay-service").textContent = st.relayService ? "on (relays for other peers)" : "off";
}

// relayItem is one relay: its ID, the reservation (until when) or none,
// the last error, and the node's circuit addresses through it.
function relayItem(r) {
  const state = el("div", {}, el("span", { class: "badge" + (r.reserved ? " reserved" : "") }, r.reserved ? "reserved" : "not reserved"));
  if (r.reserved && r.expires) state.append(" until ", el("time", { datetime: r.expires, title: r.expires }, fmtTime(r.expires)));
  const circuits = r.addrs || [];
  return el("li", { class: "relay", "data-relay": r.id, "data-reserved": r.reserved ? "true" : "false" },
    el("code", {}, r.id), state,
    r.error ? el("div", { class: "muted error" }, "last error: " + r.error) : null,
    circuits.length === 0 ? null : el("div", { class: "muted" }, plural(circuits.length, "circuit address", "circuit addresses") + ":"),
    circuits.length === 0 ? null : el("ul", { class: "circuits" }, ...circuits.map((a) => el("li", {}, el("code", {}, a)))));
}

// The peers whose addresses are shown: a refresh keeps them open.
const openPeers = new Set();

// renderPeers lists the connected peers: how each is connected (direct,
// or relayed and through which relay), the transport, the latency and,
// folded, the addresses.
function renderPeers(peers) {
  $("peers").replaceChildren(...(peers.length === 0 ? [el("li", { class: "muted" }, "no peers connected")] : peers.map(peerItem)));
}

function peerItem(p) {
  const conn = p.connection || "unknown";
  const how = el("div", { class: "muted" }, el("span", { class: "badge conn " + conn, title: "connection" }, conn));
  if (p.relay) how.append(" via ", el("code", { class: "relay", title: "relay" }, p.relay));
  if (p.transport) how.append(" · ", el("span", { class: "transport", title: "transport" }, p.transport));
  if (p.latencyMs) how.append(" · " + p.latencyMs.toFixed(1) + " ms");
  const addrs = p.addrs || [];
  return el("li", { class: "peer", "data-peer": p.id, "data-connection": p.connection || "", "data-transport": p.transport || "" },
    el("code", {}, p.id), how,
    addrs.length === 0 ? null : el("details", {
      open: openPeers.has(p.id),
      ontoggle: (ev) => { if (ev.target.open) openPeers.add(p.id); else openPeers.delete(p.id); },
    }, el("summary", { class: "muted" }, plural(addrs.length, "address", "addresses")),
    el("ul", {}, ...addrs.map((a) => el("li", {}, el("code", {}, a))))));
}

async function refreshNode() {
  const [st, ps] = await Promise.all([api("/api/status"), api("/api/peers")]);
  renderStatus(st);
  renderPeers((ps && ps.peers) || []);
  return st;
}

// scheduleRefresh reloads the node's state soon, at most every 300 ms.
function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = 0;
    try {
      const st = await refreshNode();
      const busy = st.scan && !["watching", "polling", "idle"].includes(st.scan.state);
      if (busy && live === "events") scheduleRefresh(); // bytes move between events
    } catch (e) { /* shown on the next poll */ }
  }, 300);
}

function startPolling(why) {
  live = "polling";
  if (peersTimer) { clearInterval(peersTimer); peersTimer = 0; }
  $("live-mode").textContent = "polling every 3 s (" + why + ")";
  if (pollTimer) return;
  pollTimer = setInterval(() => { refreshNode().catch((e) => { $("live-mode").textContent = "polling: " + e.message; }); }, 3000);
}

function addEvent(e) {
  const list = $("events");
  const what = e.path || e.cid || e.into || "";
  const item = el("li", { "data-type": e.type || "" }, el("span", { class: "badge" }, e.type || "event"), " ", what);
  if (e.cid) item.append(" ", el("button", { type: "button", class: "link", onclick: () => openRecord(e.cid) }, "open"));
  list.prepend(item);
  while (list.children.length > 20) list.lastChild.remove();
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

async function init() {
  let st = null;
  try {
    st = await refreshNode();
  } catch (e) {
    $("summary").textContent = "The node did not answer: " + e.message;
  }
  // EventSource cannot send a token: with one, poll instead.
  if (st && !token) startEvents();
  else startPolling(token ? "the API needs a token" : "the node did not answer");
  if (st && st.scan && !["watching", "polling", "idle"].includes(st.scan.state)) scheduleRefresh();
  const m = location.hash.match(/^#cid=(.+)$/);
  if (m) openRecord(decodeURIComponent(m[1]));
}

init();
