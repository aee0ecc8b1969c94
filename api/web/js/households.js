// Other households: the list of those that show this one their films
// and shows (GET /api/households), under "From other households", and
// one household's library as a poster grid (GET
// /api/households/<peer>/library): its films or its shows, a show's
// seasons, a season's episodes, paged, with a search within it.

import { $, el, plural, learnName } from "./dom.js";
import { api } from "./client.js";
import { state, link, go } from "./nav.js";
import { renderCards, seasonName } from "./cards.js";

let householdsSeq = 0;
let librarySeq = 0;
let shownLibrary = null; // the household's list on screen: its key

// householdName is how the page names a household: the name it claims,
// or the end of its ID.
function householdName(h) { return h.name || "…" + h.peer.slice(-8); }

// showHouseholds lists, above the files known from other households,
// the households that show this one their lists, by name; those that do
// not are not listed.
export async function showHouseholds() {
  const seq = ++householdsSeq;
  const part = $("households");
  part.hidden = false;
  $("households-status").textContent = "Asking the households…";
  let res;
  try {
    res = await api("/api/households");
  } catch (e) {
    if (seq === householdsSeq) $("households-status").textContent = "Could not list the households: " + e.message;
    return;
  }
  if (seq !== householdsSeq) return;
  const shared = (res.households || []).filter((h) => h.library === "shared");
  for (const h of res.households || []) learnName(h.peer, h.name || "");
  $("households-status").textContent = shared.length === 0 ? "No household shows this one its films and shows." : "";
  $("household-list").replaceChildren(...shared.map((h) =>
    el("li", { class: "household", "data-peer": h.peer },
      link({ view: "household", peer: h.peer, list: "movies" }, { class: "title", title: h.peer }, householdName(h)),
      el("div", { class: "muted" }, plural(h.films, "film") + " · " + plural(h.shows, "show")))));
}

// hideHouseholds takes the list of households away.
export function hideHouseholds() {
  householdsSeq++;
  $("households").hidden = true;
}

function libraryKey(s) { return [s.peer, s.list, s.show, s.season, s.hq, s.page, s.limit].join("\n"); }

// showHouseholdLibrary shows the household's list s names, unless it is
// on screen already.
export function showHouseholdLibrary(s) {
  $("household-search").hidden = false;
  if (document.activeElement !== $("hq")) $("hq").value = s.hq || "";
  const key = libraryKey(s);
  if (shownLibrary === key) return;
  shownLibrary = key;
  loadHouseholdLibrary(s);
}

// leaveHouseholdLibrary hides its search; the list loads again when it
// comes back.
export function leaveHouseholdLibrary() {
  shownLibrary = null;
  librarySeq++;
  $("household-search").hidden = true;
}

function libraryParams(s) {
  const p = new URLSearchParams();
  if (s.show) {
    p.set("show", s.show);
    if (s.season !== "") p.set("season", s.season);
  } else {
    p.set("view", s.list === "shows" ? "shows" : "movies");
    if (s.hq) p.set("q", s.hq);
  }
  if (s.page > 1) p.set("page", String(s.page));
  if (s.limit) p.set("limit", s.limit);
  return p;
}

async function loadHouseholdLibrary(s) {
  const seq = ++librarySeq;
  $("library-status").textContent = "Asking the household…";
  $("library").setAttribute("aria-busy", "true");
  $("show-header").hidden = true;
  $("empty-hint").hidden = true;
  let page;
  try {
    page = await api("/api/households/" + encodeURIComponent(s.peer) + "/library?" + libraryParams(s).toString());
  } catch (e) {
    if (seq !== librarySeq) return;
    $("library").removeAttribute("aria-busy");
    $("entries").replaceChildren();
    $("pager").hidden = true;
    $("crumbs").hidden = true;
    $("library-status").textContent = "The household's list could not be read: " + e.message;
    return;
  }
  if (seq !== librarySeq) return;
  $("library").removeAttribute("aria-busy");
  learnName(page.peer, page.name || "");
  renderCrumbs(s, page);
  const entries = page.entries || [];
  $("library-status").textContent = listLine(page, entries);
  renderCards(s, page, { list: { view: "household", peer: s.peer, list: "shows" }, peer: page.peer });
}

const NOUNS = { movies: ["film", "films"], shows: ["show", "shows"], seasons: ["season", "seasons"], episodes: ["episode", "episodes"] };

function listLine(page, entries) {
  const noun = NOUNS[page.view] || ["entry", "entries"];
  if (page.total === 0) return page.q ? "No " + noun[1] + " match “" + page.q + "”." : "No " + noun[1] + ".";
  if (entries.length === 0) return "Page " + page.page + " is past the last (" + plural(page.pages, "page") + ").";
  return plural(page.total, noun[0], noun[1]) + (page.pages > 1 ? " · page " + page.page + " of " + page.pages : "");
}

// renderCrumbs: the household › Films or Shows › the show › a season.
function renderCrumbs(s, page) {
  const nav = $("crumbs");
  const home = { view: "household", peer: s.peer };
  const parts = [link({ view: "peers" }, {}, "Households"), " › ", el("span", { class: "household-name", title: s.peer }, householdName(page)), " › "];
  const tab = (list, words) => (!s.show && (s.list || "movies") === list) ? el("span", { "aria-current": "page" }, words) : link({ ...home, list }, { "data-list": list }, words);
  parts.push(tab("movies", plural(page.films, "film")), " · ", tab("shows", plural(page.shows, "show")));
  if (s.show) {
    const title = page.showTitle || s.show;
    parts.push(" › ");
    if (page.view === "episodes") {
      parts.push(link({ ...home, list: "shows", show: s.show }, { "data-show": s.show }, title), " › ", el("span", { "aria-current": "page" }, seasonName(page.season)));
    } else {
      parts.push(el("span", { "aria-current": "page" }, title));
    }
  }
  nav.replaceChildren(...parts);
  nav.hidden = false;
}

// bindHouseholdSearch makes the search within a household's list work:
// its films or its shows whose titles hold the words.
export function bindHouseholdSearch() {
  $("household-search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const hq = $("hq").value.trim();
    go({ view: "household", peer: state.peer, list: state.list === "shows" ? "shows" : "movies", hq });
  });
}
