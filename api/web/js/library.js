// The library's lists: the views' tabs, a list's cards, a show's trail,
// the pager, and the hint of an empty library.

import { $, el, plural, codeList, learnNames } from "./dom.js";
import { api } from "./client.js";
import { state, urlOf, link } from "./nav.js";
import { renderCards, seasonName } from "./cards.js";
import { showHeader } from "./show.js";
import { markCards } from "./members.js";

const VIEWS = { recent: "Recently added", movies: "Movies", shows: "Shows", other: "Home videos", peers: "From other households", duplicates: "Duplicates", node: "Node" };

// LIST_NOUNS name what each list counts.
const LIST_NOUNS = {
  recent: ["media file", "media files"], movies: ["movie", "movies"], shows: ["show", "shows"], other: ["video", "videos"], peers: ["file", "files"],
  seasons: ["season", "seasons"], episodes: ["episode", "episodes"],
};

let listSeq = 0;
let shown = null;     // the list on screen: its key
let lastPage = null;  // the list shown: its answer
let nodeStatus = null; // the node's last status, which says whether the library is empty

function listKey(s) { return [s.view || "recent", s.show, s.season, s.page, s.limit].join("\n"); }

// showList shows the list s names, unless it is on screen already.
export function showList(s) {
  const key = listKey(s);
  if (shown !== key) { shown = key; loadList(s); }
}

// forgetList has the list load again when it comes back (files may come
// and go meanwhile).
export function forgetList() { shown = null; }

// reloadList loads the list on screen again (files came or went).
export function reloadList() {
  if (state.q || state.view === "node" || state.view === "duplicates" || state.view === "household") return; // no list of this household's on screen
  shown = listKey(state);
  loadList(state);
}

// loadList shows the list s names.
async function loadList(s) {
  const seq = ++listSeq;
  renderViews(s);
  $("library-status").textContent = "Loading…";
  $("library").setAttribute("aria-busy", "true");
  let page;
  try {
    page = await api("/api/library?" + listParams(s).toString());
  } catch (e) {
    if (seq === listSeq) listFailed(e);
    return;
  }
  if (seq !== listSeq) return;
  $("library").removeAttribute("aria-busy");
  learnNames(page && page.peerNames);
  lastPage = page;
  renderList(s, page);
}

// listParams are the query of GET /api/library for the list s names.
function listParams(s) {
  const p = new URLSearchParams();
  if (s.show) {
    p.set("show", s.show);
    if (s.season !== "") p.set("season", s.season);
  } else {
    p.set("view", VIEWS[s.view] ? s.view : "recent");
  }
  if (s.page > 1) p.set("page", String(s.page));
  if (s.limit) p.set("limit", s.limit);
  return p;
}

function listFailed(e) {
  $("library").removeAttribute("aria-busy");
  lastPage = null;
  $("entries").replaceChildren();
  $("pager").hidden = true;
  $("crumbs").hidden = true;
  $("library-status").textContent = "Could not load the list: " + e.message;
}

// renderViews marks the view s shows in the views' tabs.
export function renderViews(s) {
  const current = s.view === "household" ? "peers" : s.show ? "shows" : (VIEWS[s.view] ? s.view : "recent");
  for (const a of $("views").querySelectorAll("a[data-view]")) {
    a.setAttribute("href", urlOf({ view: a.dataset.view }));
    if (a.dataset.view === current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

function renderList(s, page) {
  renderCrumbs(s, page);
  const seq = listSeq;
  showHeader(s, page, () => seq === listSeq);
  const entries = page.entries || [];
  $("library-status").textContent = listLine(page, entries);
  renderCards(s, page, { list: {} });
  markCards();
}

// listLine counts a list's entries (nothing when the library is empty:
// the empty library's hint says more).
function listLine(page, entries) {
  const noun = LIST_NOUNS[page.view] || ["entry", "entries"];
  if (page.total === 0) return libraryEmpty() ? "" : "No " + noun[1] + " yet.";
  if (entries.length === 0) {
    return "Page " + page.page + " is past the last (" + plural(page.pages, "page") + ", " + plural(page.total, noun[0], noun[1]) + ").";
  }
  return plural(page.total, noun[0], noun[1]) + (page.pages > 1 ? " · page " + page.page + " of " + page.pages : "");
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

// libraryEmpty reports whether the node's status says the library holds
// no file at all (nor any known from peers).
function libraryEmpty() {
  const f = nodeStatus && nodeStatus.files;
  return !!(f && f.loaded && f.local === 0 && f.fromPeers === 0);
}

// statusChanged takes the node's new status: the empty library's hint
// comes or goes, and a list that was empty for want of files is shown
// again when the first comes.
export function statusChanged(st) {
  const wasEmpty = libraryEmpty();
  nodeStatus = st;
  renderEmptyHint(st);
  if (wasEmpty && !libraryEmpty() && lastPage && lastPage.total === 0) renderList(state, lastPage);
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
