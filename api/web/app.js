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

// api fetches a JSON endpoint; a 401 asks for the token and retries
// (unless opts.ask is false: then it is an error with its status, as
// others are).
async function api(path, opts) {
  const ask = !opts || opts.ask !== false;
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const resp = await fetch(path, { headers });
    if (resp.status === 401 && ask && attempt < 3) {
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
  const seq = ++searchSeq;
  const status = $("search-status");
  const list = $("results");
  status.textContent = "Searching…";
  list.replaceChildren();
  try {
    const res = await api("/api/search?q=" + encodeURIComponent(q) + (federated ? "&federated=1" : ""));
    if (seq !== searchSeq) return;
    const hits = res.hits || [];
    status.textContent = (hits.length === 0 ? "Nothing found for “" + q + "”" : plural(hits.length, "result") + " for “" + q + "”") +
      (federated ? " (asked " + plural(res.asked || 0, "household") + ", " + (res.fromIndex || 0) + " through the search index; " +
        plural((res.peers || []).length, "household") + " answered)" : "") + ".";
    for (const h of hits) {
      list.append(el("li", { class: "hit card", "data-source": h.source === "local" ? "local" : "peer" },
        link(() => ({ ...state, cid: h.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(h.poster, h.source, h.title)),
        recordLink(h.cid, { class: "title" }, h.title || "(untitled)"),
        el("div", { class: "muted" }, hitLine(h)),
        sourceLine(h.source)));
    }
  } catch (e) {
    if (seq === searchSeq) status.textContent = "Search failed: " + e.message;
  }
}

let searchSeq = 0;

// sourceLine says where a file is: on this node, or known only from a
// peer (which).
function sourceLine(source) {
  if (source === "local") return el("div", { class: "muted source" }, "on this node");
  return el("div", { class: "muted source peer" }, el("span", { class: "badge peer" }, "known from a peer"), " ",
    el("code", {}, source || "unknown peer"));
}

$("search-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  clearTimeout(typingTimer);
  const q = $("q").value.trim();
  if (q) go({ q, federated: $("federated").checked });
});

// Search as one types: words match by their beginning, so every pause
// of typing searches (the URL follows, one history entry per search, not
// per letter); emptying the box goes back to the library. A federated
// search asks other households, so it waits for Enter.
let typingTimer = 0;
$("q").addEventListener("input", () => {
  clearTimeout(typingTimer);
  if ($("federated").checked) return;
  typingTimer = setTimeout(() => {
    const q = $("q").value.trim();
    if (q === state.q) return;
    const s = q ? { q } : {};
    if (state.q) {
      history.replaceState(null, "", urlOf(s));
      render(stateFromURL());
    } else if (q) {
      go(s);
    }
  }, 250);
});

// posterImg is a card's picture: the poster's thumbnail, or a
// placeholder when the file has none (or the node cannot serve it).
function posterImg(poster, source, title) {
  const ph = () => el("div", { class: "placeholder", role: "img", "aria-label": "No poster" }, (title || "?").trim().charAt(0).toUpperCase() || "?");
  if (!poster || (source && source !== "local") || token) return ph();
  const img = el("img", { src: "/api/thumb/" + encodeURIComponent(poster) + "?w=320", alt: "", loading: "lazy", class: "thumb" });
  img.addEventListener("error", () => img.replaceWith(ph()));
  return img;
}

$("cid-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const cid = $("cid").value.trim();
  if (cid) go({ ...state, cid });
});

// ---- where the page is: the URL ----

// The page's state is its URL: ?q= (a search, with federated=1), or a
// list of the library (view=recent|movies|shows, show=<key> and season=N
// for a show's seasons or a season's episodes, page=N, limit=N), and
// cid=<cid> for the open record. Links carry it, reload keeps it, back
// and forward walk it (pushState, popstate).
let state = {};

function stateFromURL() {
  const p = new URLSearchParams(location.search);
  const page = parseInt(p.get("page") || "1", 10);
  const s = {
    q: (p.get("q") || "").trim(), federated: p.get("federated") === "1",
    view: p.get("view") || "", show: p.get("show") || "", season: p.get("season") || "",
    page: page > 1 ? page : 1, limit: p.get("limit") || "", cid: p.get("cid") || "",
  };
  const m = location.hash.match(/^#cid=(.+)$/); // links of older pages
  if (m && !s.cid) s.cid = decodeURIComponent(m[1]);
  return s;
}

// urlOf is the page's URL for state s.
function urlOf(s) {
  const p = new URLSearchParams();
  if (s.q) {
    p.set("q", s.q);
    if (s.federated) p.set("federated", "1");
  } else {
    if (s.show) {
      p.set("show", s.show);
      if (s.season !== "" && s.season !== undefined) p.set("season", s.season);
    } else if (s.view && s.view !== "recent") {
      p.set("view", s.view);
    }
    if (s.page > 1) p.set("page", String(s.page));
    if (s.limit) p.set("limit", s.limit);
  }
  if (s.cid) p.set("cid", s.cid);
  const qs = p.toString();
  return "/" + (qs ? "?" + qs : "");
}

// go moves the page to state s: a new history entry, then rendered.
function go(s) {
  history.pushState(null, "", urlOf(s));
  render(stateFromURL());
}

window.addEventListener("popstate", () => render(stateFromURL()));

// plainClick reports a click the page follows itself: the main button,
// no modifier (those open a new tab or window, as the link says).
function plainClick(ev) {
  return ev.button === 0 && !ev.metaKey && !ev.ctrlKey && !ev.shiftKey && !ev.altKey;
}

// link is an <a> to state s: a plain link (a new tab, a copied address),
// followed in the page on a plain click; s may be a function, called on
// the click, returning the state.
function link(s, attrs, ...children) {
  const a = el("a", { ...attrs, href: urlOf(typeof s === "function" ? s() : s) }, ...children);
  a.addEventListener("click", (ev) => {
    if (!plainClick(ev)) return;
    ev.preventDefault();
    go(typeof s === "function" ? s() : s);
  });
  return a;
}

// recordLink opens the record of cid over what the page shows when it
// is clicked.
function recordLink(cid, attrs, ...children) {
  return link(() => ({ ...state, cid }), { ...attrs, "data-cid": cid }, ...children);
}

// What is on screen, so a render only loads what changed.
const shown = { search: null, list: null, cid: null };

function render(s) {
  state = s;
  if (document.activeElement !== $("q")) $("q").value = s.q;
  $("federated").checked = s.federated;
  const searching = s.q !== "";
  // A record is a page of its own, at the top: the list or the search it
  // was opened from comes back when it is closed.
  const recordOpen = s.cid !== "";
  const nodeView = !searching && s.view === "node";
  $("library").hidden = searching || recordOpen;
  $("library").classList.toggle("node-view", nodeView);
  $("node").hidden = !nodeView || recordOpen;
  $("results").hidden = recordOpen;
  $("search-status").hidden = recordOpen;
  $("search-back").hidden = !searching;
  if (searching) {
    shown.list = null; // files may come and go meanwhile: back, it loads again
    const key = s.q + "\n" + s.federated;
    if (shown.search !== key) { shown.search = key; search(s.q, s.federated); }
  } else if (shown.search !== null) {
    shown.search = null;
    searchSeq++;
    $("results").replaceChildren();
    $("search-status").textContent = "";
  }
  if (nodeView) {
    renderViews(s);
  } else if (!searching) {
    const key = listKey(s);
    if (shown.list !== key) { shown.list = key; loadList(s); }
  }
  if (s.cid && shown.cid !== s.cid) {
    shown.cid = s.cid;
    openRecord(s.cid);
  } else if (!s.cid && shown.cid !== null) {
    shown.cid = null;
    recordSeq++;
    $("record").hidden = true;
  }
}

for (const a of $("views").querySelectorAll("a[data-view]")) {
  a.addEventListener("click", (ev) => {
    if (!plainClick(ev)) return;
    ev.preventDefault();
    go({ view: a.dataset.view });
  });
}

$("back-to-library").addEventListener("click", (ev) => {
  ev.preventDefault();
  go({});
});
$("close-record").addEventListener("click", (ev) => {
  ev.preventDefault();
  go({ ...state, cid: "" });
});

// ---- library ----

const VIEWS = { recent: "Recently added", movies: "Movies", shows: "Shows", peers: "From other households", node: "Node" };
let listSeq = 0;
let lastPage = null; // the list shown: its answer

function listKey(s) { return [s.view || "recent", s.show, s.season, s.page, s.limit].join("\n"); }

function seasonName(n) { return n === 0 ? "Specials" : "Season " + n; }

// loadList shows the list s names.
async function loadList(s) {
  const seq = ++listSeq;
  const p = new URLSearchParams();
  if (s.show) {
    p.set("show", s.show);
    if (s.season !== "") p.set("season", s.season);
  } else {
    p.set("view", VIEWS[s.view] ? s.view : "recent");
  }
  if (s.page > 1) p.set("page", String(s.page));
  if (s.limit) p.set("limit", s.limit);
  renderViews(s);
  $("library-status").textContent = "Loading…";
  $("library").setAttribute("aria-busy", "true");
  let page;
  try {
    page = await api("/api/library?" + p.toString());
  } catch (e) {
    if (seq !== listSeq) return;
    $("library").removeAttribute("aria-busy");
    lastPage = null;
    $("entries").replaceChildren();
    $("pager").hidden = true;
    $("crumbs").hidden = true;
    $("library-status").textContent = "Could not load the list: " + e.message;
    return;
  }
  if (seq !== listSeq) return;
  $("library").removeAttribute("aria-busy");
  lastPage = page;
  renderList(s, page);
}

// renderViews marks the view s shows in the views' tabs.
function renderViews(s) {
  const current = s.show ? "shows" : (VIEWS[s.view] ? s.view : "recent");
  for (const a of $("views").querySelectorAll("a[data-view]")) {
    a.setAttribute("href", urlOf({ view: a.dataset.view }));
    if (a.dataset.view === current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

// LIST_NOUNS name what each list counts.
const LIST_NOUNS = {
  recent: ["media file", "media files"], movies: ["movie", "movies"], shows: ["show", "shows"], peers: ["file", "files"],
  seasons: ["season", "seasons"], episodes: ["episode", "episodes"],
};

function renderList(s, page) {
  renderCrumbs(s, page);
  showHeader(s, page);
  const noun = LIST_NOUNS[page.view] || ["entry", "entries"];
  const entries = page.entries || [];
  const st = $("library-status");
  if (page.total === 0) {
    st.textContent = libraryEmpty() ? "" : "No " + noun[1] + " yet.";
  } else if (entries.length === 0) {
    st.textContent = "Page " + page.page + " is past the last (" + plural(page.pages, "page") + ", " + plural(page.total, noun[0], noun[1]) + ").";
  } else {
    st.textContent = plural(page.total, noun[0], noun[1]) + (page.pages > 1 ? " · page " + page.page + " of " + page.pages : "");
  }
  $("entries").replaceChildren(...entries.map((e) => entryItem(s, page, e)));
  const pager = $("pager");
  pager.hidden = page.pages <= 1;
  const turn = (id, n) => {
    const a = $(id);
    const ok = n >= 1 && n <= page.pages;
    a.hidden = !ok;
    a.setAttribute("href", urlOf({ ...s, page: n, cid: "" }));
    a.onclick = (ev) => {
      if (!plainClick(ev)) return;
      ev.preventDefault();
      go({ ...s, page: n, cid: "" });
    };
  };
  turn("prev", page.page - 1);
  turn("next", page.page + 1);
  $("page-of").textContent = "Page " + page.page + " of " + Math.max(page.pages, 1);
}

// shows keeps what a show's header shows, by its key: one episode's
// record holds the show's title, year, genres, plot and artwork (its
// NFO's, which every episode inherits).
const shows = new Map();

// showHeader heads a show's seasons and a season's episodes with the
// show: its poster, title, year and genres, plot, and its fanart behind;
// a season's episodes get their own plots where they have one.
async function showHeader(s, page) {
  const box = $("show-header");
  if (!s.show) { box.hidden = true; box.replaceChildren(); return; }
  const seq = listSeq;
  let info = shows.get(s.show);
  if (!info) {
    try {
      let cid = page.view === "episodes" && page.entries.length ? page.entries[0].cid : "";
      if (!cid && page.view === "seasons" && page.entries.length) {
        const first = await api("/api/library?show=" + encodeURIComponent(s.show) + "&season=" + page.entries[0].season + "&limit=1");
        cid = first.entries.length ? first.entries[0].cid : "";
      }
      if (!cid) return;
      const doc = await api("/api/meta/" + encodeURIComponent(cid));
      const plot = doc.plot && typeof doc.plot === "object" ? (doc.plot.eng || Object.values(doc.plot)[0]) : "";
      info = { title: page.showTitle || s.show, year: doc.movieYear, genres: asList(doc.genre), plot: typeof plot === "string" ? plot : "",
        poster: doc.art && doc.art.poster, fanart: doc.art && doc.art.fanart, local: doc.source === "local" };
      shows.set(s.show, info);
    } catch (e) {
      return; // the list stands without its header
    }
  }
  if (seq !== listSeq) return;
  const facts = [info.year ? String(info.year) : "", info.genres.join(", ")].filter(Boolean).join(" · ");
  box.replaceChildren(posterImg(info.poster, info.local ? "local" : "peer", info.title),
    el("div", {}, el("h3", {}, info.title), facts ? el("p", { class: "muted" }, facts) : null, info.plot ? el("p", { class: "show-plot" }, info.plot) : null));
  const fan = info.fanart && info.local && !token ? "/api/thumb/" + encodeURIComponent(info.fanart) + "?w=640" : "";
  box.style.backgroundImage = fan ? "linear-gradient(rgba(0,0,0,.55), rgba(0,0,0,.55)), url(" + JSON.stringify(fan) + ")" : "";
  box.classList.toggle("fanart", !!fan);
  box.hidden = false;
  if (page.view === "episodes") episodePlots(page, info.plot, seq);
}

// episodePlots adds to a season's episode cards the plots of their own
// (an episode NFO's; the show's plot, which every episode inherits, is
// in the header already).
// episodePlot keeps each episode's plot once read, by CID: a season's
// list reloads whenever files come or go.
const episodePlot = new Map();

async function episodePlots(page, showPlot, seq) {
  await Promise.all((page.entries || []).map(async (e) => {
    let plot = episodePlot.get(e.cid);
    if (plot === undefined) {
      let doc;
      try { doc = await api("/api/meta/" + encodeURIComponent(e.cid)); } catch (err) { return; }
      plot = doc.plot && typeof doc.plot === "object" ? (doc.plot.eng || Object.values(doc.plot)[0]) : "";
      episodePlot.set(e.cid, typeof plot === "string" ? plot : "");
    }
    if (seq !== listSeq || typeof plot !== "string" || !plot || plot === showPlot) return;
    const card = document.querySelector('#entries li[data-cid="' + CSS.escape(e.cid) + '"]');
    if (card) card.append(el("p", { class: "plot" }, plot));
  }));
}

// renderCrumbs shows where a show's list is: Shows › the show › a season.
function renderCrumbs(s, page) {
  const nav = $("crumbs");
  if (!s.show) { nav.hidden = true; nav.replaceChildren(); return; }
  const title = page.showTitle || s.show;
  const parts = [link({ view: "shows" }, {}, "Shows"), " › "];
  if (page.view === "episodes") {
    parts.push(link({ show: s.show }, { "data-show": s.show }, title), " › ", el("span", { "aria-current": "page" }, seasonName(page.season)));
  } else {
    parts.push(el("span", { "aria-current": "page" }, title));
  }
  nav.replaceChildren(...parts);
  nav.hidden = false;
}

// entryItem is one card of a list: a poster (or a placeholder), the
// title, and under it the year or the counts.
function entryItem(s, page, e) {
  if (e.kind === "show") {
    const counts = [plural(e.seasons, "season"), plural(e.episodes, "episode")];
    return el("li", { class: "entry show card", "data-show": e.show },
      link({ show: e.show }, { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, "local", e.title)),
      link({ show: e.show }, { class: "title", "data-show": e.show }, e.title || e.show),
      el("div", { class: "muted" }, counts.join(" · ")));
  }
  if (e.kind === "season") {
    const counts = [plural(e.episodes, "episode")];
    return el("li", { class: "entry season card", "data-season": String(e.season) },
      link({ show: e.show, season: String(e.season) }, { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, "local", seasonName(e.season))),
      link({ show: e.show, season: String(e.season) }, { class: "title", "data-season": String(e.season) }, seasonName(e.season)),
      el("div", { class: "muted" }, counts.join(" · ")));
  }
  const episodes = page.view === "episodes";
  const title = episodes
    ? (e.episode !== undefined ? "Episode " + e.episode : "") + (e.episodeTitle ? (e.episode !== undefined ? ": " : "") + e.episodeTitle : "")
    : e.title;
  // The record opens with the list's state under it (from an episode
  // list: the show and season, where its neighbours are).
  return el("li", { class: "entry file card", "data-cid": e.cid, "data-source": e.source === "local" ? "local" : "peer" },
    link(() => ({ ...state, cid: e.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, e.source, e.title)),
    recordLink(e.cid, { class: "title" }, title || e.title || "(untitled)"),
    el("div", { class: "muted" }, hitLine(episodes ? { ...e, episodeTitle: "" } : e)),
    e.source === "local" ? null : sourceLine(e.source));
}

// libraryEmpty reports whether the node's status says the library holds
// no file at all (nor any known from peers).
function libraryEmpty() {
  const f = lastStatus && lastStatus.files;
  return !!(f && f.loaded && f.local === 0 && f.fromPeers === 0);
}

// renderEmptyHint says how to add files while the library has none.
function renderEmptyHint(st) {
  const empty = libraryEmpty();
  $("empty-hint").hidden = !empty;
  if (!empty) return;
  const libs = st.libraries || [];
  $("empty-copy").firstChild.textContent = libs.length === 1 ? "Copy videos into the library folder below and they appear here as soon as they are hashed, for example " :
    "Copy videos into one of the library folders below and they appear here as soon as they are hashed, for example ";
  codeList("empty-folders", libs, "no library folder is configured (--library)");
  if (lastPage && lastPage.total === 0) $("library-status").textContent = "";
}

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
  $("close-record").setAttribute("href", urlOf({ ...state, cid: "" }));
  window.scrollTo(0, 0);
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
  // An episode is headed S01E02 · The Storm, under a link to its show.
  const isEpisode = typeof doc.season === "number" && typeof doc.episode === "number";
  const showKey = state.show || foldTitle(title);
  const epLine = $("record-episode");
  epLine.replaceChildren();
  if (isEpisode) {
    $("record-title").textContent = "S" + pad2(doc.season) + "E" + pad2(doc.episode) + (doc.episodeTitle ? " · " + doc.episodeTitle : "");
    epLine.append(link({ show: showKey }, { class: "show-link", "data-show": showKey }, title));
  } else {
    $("record-title").textContent = title;
  }
  $("record-facts").textContent = factsOf(doc, title).join(" · ");
  episodeNav(isEpisode ? { show: showKey, season: doc.season, episode: doc.episode, cid: canonical } : null, seq);
  $("record-status").textContent = "";
  const bits = [];
  if (doc.mimeType) bits.push(doc.mimeType);
  if (typeof doc.sizeByte === "number") bits.push(fmtBytes(doc.sizeByte));
  // A file known only from peers has no bytes here: no download, no
  // player (GET /api/file answers 404), but the peers that hold it.
  const local = doc.source === "local";
  if (doc.source) bits.push(local ? "on this node" : "known only from peer " + doc.source);
  if (typeof doc.filePath === "string") bits.push(doc.filePath);
  $("record-summary").textContent = bits.join(" · ");

  // The poster (served by the node when it holds the image), the plot,
  // the subtitles by language.
  const poster = $("poster");
  poster.replaceChildren();
  const posterCID = doc.art && typeof doc.art.poster === "string" ? doc.art.poster : "";
  if (posterCID && doc.source === "local" && !token) {
    poster.append(el("img", { src: "/api/thumb/" + encodeURIComponent(posterCID) + "?w=640", alt: "Poster of " + title, class: "poster" }));
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

  // A file known only from peers plays and downloads when a household
  // that has it shares it (its bytes come from there, through this
  // node): Download and the player wait for GET /api/sources to say so.
  $("peer-only").hidden = local;
  $("download-part").hidden = true;
  $("player").replaceChildren();
  const href = "/api/file/" + encodeURIComponent(canonical);
  const dl = $("download");
  dl.href = href;
  dl.onclick = token ? (ev) => { ev.preventDefault(); downloadWithToken(href, title); } : null;
  const offer = (size) => {
    dl.textContent = "Download" + (typeof size === "number" ? " (" + fmtBytes(size) + ")" : "");
    $("download-part").hidden = false;
    // The poster frame and the subtitles are thumbnails and files of
    // this node's: a peer's file plays without them.
    showPlayer(playable(doc.mimeType), href, title, canonical, local ? posterCID : "", local ? byLang : {}, flags);
  };
  if (local) {
    offer(doc.sizeByte);
  } else {
    peerSources(canonical, seq, (src) => offer(typeof doc.sizeByte === "number" ? doc.sizeByte : src.size));
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
  $("providers-status").textContent = "";
  if (!local) findProviders(canonical, asList(doc.providers), seq);
  const dups = asList(doc.duplicates);
  listInto("duplicates", dups, "none");
  if (typeof doc.duplicateCount === "number" && doc.duplicateCount > dups.length) {
    $("duplicates").append(el("li", { class: "muted" }, "… " + (doc.duplicateCount - dups.length) + " more"));
  }
  $("tree").replaceChildren(tree(doc));
  $("record-body").hidden = false;
}

// showPlayer puts the player of kind ("video", "audio", or "" for none)
// of the file at href in the record: with its poster frame (the
// thumbnail of posterCID), its subtitles, and resuming where this
// browser left it; with a token, a button that loads it (a <video>
// cannot send the token).
function showPlayer(kind, href, title, canonical, posterCID, byLang, flags) {
  const player = $("player");
  player.replaceChildren();
  if (kind && !token) {
    const media = el(kind, { controls: true, preload: "metadata", src: href, "aria-label": "Play " + title,
      poster: kind === "video" && posterCID ? "/api/thumb/" + encodeURIComponent(posterCID) + "?w=640" : null });
    if (kind === "video") addTracks(media, byLang, flags);
    resumable(media, canonical);
    player.append(media);
  } else if (kind) {
    player.append(el("button", { type: "button", onclick: () => playWithToken(kind, href, title) }, "Load player"));
  }
}

// shortPeer is a peer's ID as the page shows it among words: its last
// eight characters, the whole ID in its title.
function shortPeer(id) {
  const s = String(id || "");
  return el("code", { class: "peer-id", title: s, "data-peer": s }, s.length > 16 ? "…" + s.slice(-8) : s);
}

// andList joins nodes as words do: "a", "a and b", "a, b and c".
function andList(nodes) {
  const out = [];
  nodes.forEach((n, i) => {
    if (i > 0) out.push(i === nodes.length - 1 ? " and " : ", ");
    out.push(n);
  });
  return out;
}

// SOURCE_WORDS say what each answer of a peer's household (GET
// /api/sources, providers[].state) means, of one household and of
// several.
const SOURCE_WORDS = {
  "does not share": ["does not share its files (it does not run --share-files)", "do not share their files (they do not run --share-files)"],
  relayed: ["is reached only through a relay, which carries too little for a file: its bytes need a direct connection",
    "are reached only through a relay, which carries too little for a file: their bytes need a direct connection"],
  unreachable: ["could not be reached", "could not be reached"],
  "no answer": ["did not answer", "did not answer"],
  shares: ["shares its files but did not send this one", "share their files but did not send this one"],
};

// unavailableWords say why a file known only from peers cannot be
// played or downloaded here: what each household that has it answered,
// else the node's reason.
function unavailableWords(src) {
  const lead = "It cannot be played or downloaded here: ";
  const by = new Map();
  for (const p of Array.isArray(src.providers) ? src.providers : []) {
    if (!p || !SOURCE_WORDS[p.state]) return [lead + String(src.reason || "no household that has it sent it").replace(/\.$/, "") + "."];
    if (!by.has(p.state)) by.set(p.state, []);
    by.get(p.state).push(p.peer);
  }
  if (by.size === 0) return [lead + String(src.reason || "no household that has it is known").replace(/\.$/, "") + "."];
  const out = [lead];
  for (const state of Object.keys(SOURCE_WORDS)) {
    const peers = by.get(state);
    if (!peers) continue;
    if (out.length > 1) out.push("; ");
    const one = peers.length === 1;
    out.push(one ? "the household " : "the households ", ...andList(peers.map(shortPeer)), " " + SOURCE_WORDS[state][one ? 0 : 1]);
  }
  out.push(".");
  return out;
}

// peerSources asks where the bytes of a file known only from peers can
// come from (GET /api/sources asks its households for the file's root:
// up to some 15 s when none answers) and says it; offer(sources) shows
// Download and the player when a household that shares it sent it.
async function peerSources(cid, seq, offer) {
  const line = $("sources");
  line.replaceChildren("Looking for a household that shares it…");
  let src;
  try {
    src = await api("/api/sources/" + encodeURIComponent(cid), { ask: false });
  } catch (e) {
    if (seq !== recordSeq) return;
    if (e.status === 401 || e.status === 403) {
      line.replaceChildren("Fetching files from other households needs this node's API token: without it, only this household's own files play and download here.");
    } else if (e.status === 404) {
      line.replaceChildren("No household that has it is known now: it cannot be played or downloaded here.");
    } else {
      line.replaceChildren("Could not find out where its bytes could come from: " + e.message);
    }
    return;
  }
  if (seq !== recordSeq) return;
  if (!src.available) {
    line.replaceChildren(...unavailableWords(src));
    return;
  }
  const from = (Array.isArray(src.providers) ? src.providers : []).filter((p) => p && p.state === "shares").map((p) => p.peer);
  line.replaceChildren(...(from.length === 0 ? ["From the households that share it."] :
    ["From " + plural(from.length, "household") + " that share" + (from.length === 1 ? "s" : "") + " it: ", ...andList(from.map(shortPeer)), "."]));
  offer(src);
}

// foldTitle is a show's key as the node folds its title (lower case,
// accents removed, words of letters and digits), for an episode opened
// from elsewhere than its season's list.
function foldTitle(t) {
  return String(t).normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .split(/[^\p{L}\p{N}]+/u).filter(Boolean).join(" ");
}

// factsOf are what a household wants to know of a file at a glance:
// year, runtime, genres, rating, original title, picture and sound.
function factsOf(doc, title) {
  const out = [];
  if (typeof doc.movieYear === "number") out.push(String(doc.movieYear));
  const fi = doc.fileinfo && typeof doc.fileinfo === "object" ? doc.fileinfo : {};
  if (typeof fi.duration === "number" && fi.duration > 0) {
    const m = Math.round(fi.duration / 60);
    out.push(m >= 60 ? Math.floor(m / 60) + " h " + (m % 60) + " min" : m + " min");
  }
  const genres = asList(doc.genre);
  if (genres.length) out.push(genres.join(", "));
  if (typeof doc.rating === "number") out.push("★ " + doc.rating);
  if (typeof doc.originalTitle === "string" && doc.originalTitle && doc.originalTitle !== title) out.push(doc.originalTitle);
  const sd = fi.streamdetails && typeof fi.streamdetails === "object" ? fi.streamdetails : {};
  const v = Array.isArray(sd.video) ? sd.video[0] : null;
  if (v && typeof v.height === "number") out.push((v.height >= 2000 ? "4K" : v.height + "p") + (v.codec ? " " + v.codec : ""));
  const a = Array.isArray(sd.audio) ? sd.audio[0] : null;
  if (a) out.push([a.language, a.codec, typeof a.channels === "number" ? a.channels + " ch" : ""].filter(Boolean).join(" "));
  if (typeof doc.sizeByte === "number") out.push(fmtBytes(doc.sizeByte));
  return out;
}

// addTracks gives a video its subtitles as <track>s (WebVTT, converted
// by the node), labelled by language; the one flagged default, else a
// forced one, plays at once.
function addTracks(media, byLang, flags) {
  let chosen = null;
  for (const lang of Object.keys(byLang).sort()) {
    asList(byLang[lang]).forEach((c, i) => {
      const fl = flags[lang];
      const f = String((Array.isArray(fl) ? fl[i] : (fl && typeof fl === "object" ? fl[String(i)] : "")) || "");
      const track = el("track", { kind: "subtitles", src: "/api/subtitle/" + encodeURIComponent(c), srclang: lang.slice(0, 2),
        label: lang + (f ? " (" + f + ")" : ""), "data-cid": c });
      if (f.includes("default") || (!chosen && f.includes("forced"))) chosen = track;
      media.append(track);
    });
  }
  if (chosen) chosen.setAttribute("default", "");
}

// resumable plays on from where this browser left the file (kept in the
// browser, by CID), and forgets it at the end.
function resumable(media, cid) {
  const key = "metamesh.at." + cid;
  media.addEventListener("loadedmetadata", () => {
    const at = parseFloat(localStorage.getItem(key) || "0");
    if (at > 5 && at < media.duration - 5) media.currentTime = at;
  });
  let last = 0;
  media.addEventListener("timeupdate", () => {
    if (Math.abs(media.currentTime - last) < 5) return;
    last = media.currentTime;
    localStorage.setItem(key, String(media.currentTime));
  });
  media.addEventListener("ended", () => localStorage.removeItem(key));
}

// episodeNav links an episode's record to the episodes before and after
// it in its show (the next season's first after a season's last).
async function episodeNav(ep, seq) {
  const nav = $("episode-nav");
  nav.hidden = true;
  const prev = $("prev-episode"), next = $("next-episode");
  prev.hidden = next.hidden = true;
  if (!ep) return;
  let seasons;
  try {
    seasons = await api("/api/library?show=" + encodeURIComponent(ep.show) + "&limit=200");
  } catch (e) {
    return; // not a show of this library: no neighbours to link
  }
  const order = [];
  for (const se of seasons.entries || []) {
    try {
      const page = await api("/api/library?show=" + encodeURIComponent(ep.show) + "&season=" + se.season + "&limit=200");
      for (const e of page.entries || []) order.push(e);
    } catch (e) { /* a season gone meanwhile */ }
  }
  if (seq !== recordSeq) return;
  const i = order.findIndex((e) => e.cid === ep.cid || (e.season === ep.season && e.episode === ep.episode));
  if (i < 0) return;
  const to = (a, e, word) => {
    a.hidden = false;
    const s = { show: ep.show, season: String(e.season), cid: e.cid };
    a.setAttribute("href", urlOf(s));
    a.textContent = word + ": S" + pad2(e.season) + "E" + pad2(e.episode) + (e.episodeTitle ? " · " + e.episodeTitle : "");
    a.dataset.cid = e.cid;
    a.onclick = (ev) => { if (!plainClick(ev)) return; ev.preventDefault(); go(s); };
  };
  if (i > 0) to(prev, order[i - 1], "Previous");
  if (i < order.length - 1) to(next, order[i + 1], "Next");
  nav.hidden = prev.hidden && next.hidden;
}

// findProviders asks the DHT (GET /api/providers) who has a file known
// only from peers, and adds who it names to the peers that sent it.
async function findProviders(cid, known, seq) {
  $("providers-status").textContent = "Asking the DHT who has it…";
  let res;
  try {
    res = await api("/api/providers/" + encodeURIComponent(cid));
  } catch (e) {
    if (seq === recordSeq) $("providers-status").textContent = "The DHT lookup failed: " + e.message;
    return;
  }
  if (seq !== recordSeq) return;
  const found = asList(res.providers);
  const all = [...new Set([...known, ...found])];
  const ul = $("providers");
  if (all.length > 0) ul.replaceChildren(...all.map((p) => el("li", {}, el("code", {}, p))));
  $("providers-status").textContent = "The DHT names " + plural(found.length, "provider") + ".";
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

let lastStatus = null;

// filesText counts the files as the catalog holds them: local ones and
// those known only from peers, apart.
function filesText(st) {
  const f = st.files || {};
  if (!f.loaded) return plural(st.roots ?? 0, "file") + " (counting…)";
  return plural(f.local, "local file") + " · " + f.fromPeers + " known from peers";
}

function renderStatus(st) {
  const wasEmpty = libraryEmpty();
  lastStatus = st;
  $("peer-id").textContent = st.peerId || "";
  $("files").textContent = filesText(st);
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
  // While a scan runs, its progress; after it, the library's files as
  // they are (libraryFiles: however they came in, the watcher's too).
  const scanning = sc.state === "scanning" || sc.state === "hashing";
  $("scan-text").textContent = (scanning || typeof st.libraryFiles !== "number"
    ? (sc.filesDone ?? 0) + " / " + plural(sc.filesTotal ?? 0, "file") + " scanned, " + fmtBytes(Math.min(done, total || done)) + " / " + fmtBytes(total)
    : plural(st.libraryFiles, "file") + " in the library") +
    (sc.errors ? ", " + plural(sc.errors, "error") : "") +
    (sc.hashed && !scanning ? " · " + plural(sc.hashed, "file") + " hashed since the scan began" : "");
  $("summary").textContent = "Version " + (st.version || "?") + " · " + filesText(st) + " · " +
    plural(st.peers ?? 0, "peer") + (st.redis && !st.redis.ok ? " · Redis is down" : "") +
    (st.dataDir && st.dataDir.full ? " · data directory full" : "");
  renderProblems(st);
  renderReachability(st);
  renderEmptyHint(st);
  if (wasEmpty && !libraryEmpty() && lastPage && lastPage.total === 0) renderList(state, lastPage);
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

// reloadList loads the list on screen again (files came or went).
function reloadList() {
  if (state.q || state.view === "node") return; // no list on screen
  shown.list = listKey(state);
  loadList(state);
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
  dd.replaceChildren(el("strong", {}, r), REACHABILITY[r] ? el("span", { class: "muted" }, " · " + REACHABILITY[r]) : null,
    st.reachabilityBasis ? el("div", { class: "muted", id: "reachability-basis" }, st.reachabilityBasis) : null);
  codeList("reachable-addrs", st.reachableAddrs || [], "none confirmed");
  const relays = st.relays || [];
  $("relays").replaceChildren(...(relays.length === 0 ? [el("li", { class: "muted" }, "none")] : relays.map(relayItem)));
  $("relay-service").textContent = st.relayService ? "on (relays for other peers)" : "off";
  const sh = st.sharing || {};
  $("sharing").textContent = !sh.enabled ? "off (other households cannot fetch this household's files)"
    : "on (other households may fetch this household's files" + (sh.rate > 0 ? ", at most " + fmtBytes(sh.rate) + "/s)" : ")");
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
      reloadList();
      const busy = st.scan && !["watching", "polling", "idle"].includes(st.scan.state);
      const counting = !(st.files && st.files.loaded);
      if ((busy || counting) && live === "events") scheduleRefresh(); // bytes move between events
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

// EVENT_WORDS say a path's change as the node's log does; the key-set
// events of the same change (mint, confirm, …) are not shown: one line a
// file.
const EVENT_WORDS = { add: "added", change: "changed", delete: "deleted", rename: "renamed" };

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
  const s = stateFromURL();
  history.replaceState(null, "", urlOf(s)); // an old #cid= link becomes ?cid=
  render(s);
  let st = null;
  try {
    st = await refreshNode();
  } catch (e) {
    $("summary").textContent = "The node did not answer: " + e.message;
  }
  // EventSource cannot send a token: with one, poll instead.
  if (st && !token) startEvents();
  else startPolling(token ? "the API needs a token" : "the node did not answer");
  if (st && ((st.scan && !["watching", "polling", "idle"].includes(st.scan.state)) || !(st.files && st.files.loaded))) scheduleRefresh();
}

init();
