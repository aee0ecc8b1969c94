// Where the page is: its URL.
//
// The page's state is its URL: ?q= (a search, with federated=1), or a
// list of the library (view=recent|movies|shows, show=<key> and season=N
// for a show's seasons or a season's episodes, view=duplicates with
// by=title for the works held twice, page=N, limit=N), or another
// household's list (view=household, peer=<ID>, list=movies|shows, show=
// and season= as above, hq=<words> to search it, page=N), and
// cid=<cid> for the open record. Links carry it, reload keeps it, back
// and forward walk it (pushState, popstate).

import { el } from "./dom.js";

// state is what the URL says, as last rendered.
export let state = {};
let renderer = () => {};

function stateFromURL() {
  const p = new URLSearchParams(location.search);
  const page = parseInt(p.get("page") || "1", 10);
  const s = {
    q: (p.get("q") || "").trim(), federated: p.get("federated") === "1",
    view: p.get("view") || "", show: p.get("show") || "", season: p.get("season") || "",
    page: page > 1 ? page : 1, limit: p.get("limit") || "", cid: p.get("cid") || "",
    by: p.get("by") || "", peer: p.get("peer") || "", list: p.get("list") || "", hq: (p.get("hq") || "").trim(),
  };
  const m = location.hash.match(/^#cid=(.+)$/); // links of older pages
  if (m && !s.cid) s.cid = decodeURIComponent(m[1]);
  return s;
}

// urlOf is the page's URL for state s.
export function urlOf(s) {
  const p = new URLSearchParams();
  if (s.q) {
    p.set("q", s.q);
    if (s.federated) p.set("federated", "1");
  } else {
    if (s.view === "household") {
      p.set("view", "household");
      p.set("peer", s.peer || "");
      if (!s.show && s.list && s.list !== "movies") p.set("list", s.list);
      if (!s.show && s.hq) p.set("hq", s.hq);
    }
    if (s.show) {
      p.set("show", s.show);
      if (s.season !== "" && s.season !== undefined) p.set("season", s.season);
    } else if (s.view && s.view !== "recent" && s.view !== "household") {
      p.set("view", s.view);
      if (s.view === "duplicates" && s.by && s.by !== "content") p.set("by", s.by);
    }
    if (s.page > 1) p.set("page", String(s.page));
    if (s.limit) p.set("limit", s.limit);
  }
  if (s.cid) p.set("cid", s.cid);
  const qs = p.toString();
  return "/" + (qs ? "?" + qs : "");
}

function show(s) {
  state = s;
  renderer(s);
}

// renderURL renders what the URL says.
function renderURL() { show(stateFromURL()); }

// startNav renders the page's URL with render, now and whenever back or
// forward changes it.
export function startNav(render) {
  renderer = render;
  window.addEventListener("popstate", renderURL);
  const s = stateFromURL();
  history.replaceState(null, "", urlOf(s)); // an old #cid= link becomes ?cid=
  show(s);
}

// go moves the page to state s: a new history entry, then rendered.
export function go(s) {
  history.pushState(null, "", urlOf(s));
  renderURL();
}

// replace moves the page to state s in place of the current history entry.
export function replace(s) {
  history.replaceState(null, "", urlOf(s));
  renderURL();
}

// follow goes to state s (or what the function s returns) on a plain
// click: the main button, no modifier (those open a new tab or window,
// as the link says).
export function follow(ev, s) {
  if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  go(typeof s === "function" ? s() : s);
}

// link is an <a> to state s: a plain link (a new tab, a copied address),
// followed in the page on a plain click; s may be a function, called on
// the click, returning the state.
export function link(s, attrs, ...children) {
  const a = el("a", { ...attrs, href: urlOf(typeof s === "function" ? s() : s) }, ...children);
  a.addEventListener("click", (ev) => follow(ev, s));
  return a;
}

// recordLink opens the record of cid over what the page shows when it
// is clicked.
export function recordLink(cid, attrs, ...children) {
  return link(() => ({ ...state, cid }), { ...attrs, "data-cid": cid }, ...children);
}
