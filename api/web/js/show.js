// The header of a show's lists: the show's poster, title, year, genres,
// plot and fanart, and a season's episodes' own plots.

import { $, el, asList, plotOf } from "./dom.js";
import { api, hasToken, setEvery } from "./client.js";
import { posterImg } from "./cards.js";
import { go } from "./nav.js";

// shows keeps what a show's header shows, by its key: one episode's
// record holds the show's title, year, genres, plot and artwork (its
// NFO's, which every episode inherits).
const shows = new Map();

// episodePlot keeps each episode's plot once read, by CID: a season's
// list reloads whenever files come or go.
const episodePlot = new Map();

// showHeader heads a show's seasons and a season's episodes with the
// show: its poster, title, year and genres, plot, and its fanart behind;
// a season's episodes get their own plots where they have one. current
// reports whether the list is still the one on screen.
export async function showHeader(s, page, current) {
  const box = $("show-header");
  if (!s.show) { box.hidden = true; box.replaceChildren(); return; }
  let info = shows.get(s.show);
  if (!info) {
    try {
      info = await showInfo(s, page);
    } catch (e) {
      return; // the list stands without its header
    }
    if (!info) return;
    shows.set(s.show, info);
  }
  if (!current()) return;
  fillHeader(box, info);
  showActions(s, info.local, () => { if (current()) go({ view: "shows" }); });
  if (page.view === "episodes") episodePlots(page, info.plot, current);
}

// showInfo reads what the header shows from the record of the show's
// first episode listed ("" when the list has none).
async function showInfo(s, page) {
  let cid = page.view === "episodes" && page.entries.length ? page.entries[0].cid : "";
  if (!cid && page.view === "seasons" && page.entries.length) {
    const first = await api("/api/library?show=" + encodeURIComponent(s.show) + "&season=" + page.entries[0].season + "&limit=1");
    cid = first.entries.length ? first.entries[0].cid : "";
  }
  if (!cid) return null;
  const doc = await api("/api/meta/" + encodeURIComponent(cid));
  return { title: page.showTitle || s.show, year: doc.movieYear, genres: asList(doc.genre), plot: plotOf(doc),
    poster: doc.art && doc.art.poster, fanart: doc.art && doc.art.fanart, local: doc.source === "local" };
}

function fillHeader(box, info) {
  const facts = [info.year ? String(info.year) : "", info.genres.join(", ")].filter(Boolean).join(" · ");
  box.replaceChildren(posterImg(info.poster, info.local ? "local" : "peer", info.title),
    el("div", {}, el("h3", {}, info.title), facts ? el("p", { class: "muted" }, facts) : null, info.plot ? el("p", { class: "show-plot" }, info.plot) : null));
  const fan = info.fanart && info.local && !hasToken() ? "/api/thumb/" + encodeURIComponent(info.fanart) + "?w=640" : "";
  box.style.backgroundImage = fan ? "linear-gradient(rgba(0,0,0,.55), rgba(0,0,0,.55)), url(" + JSON.stringify(fan) + ")" : "";
  box.classList.toggle("fanart", !!fan);
  box.hidden = false;
}

// episodePlots adds to a season's episode cards the plots of their own
// (an episode NFO's; the show's plot, which every episode inherits, is
// in the header already).
async function episodePlots(page, showPlot, current) {
  await Promise.all((page.entries || []).map(async (e) => {
    let plot = episodePlot.get(e.cid);
    if (plot === undefined) {
      let doc;
      try { doc = await api("/api/meta/" + encodeURIComponent(e.cid)); } catch (err) { return; }
      plot = plotOf(doc);
      episodePlot.set(e.cid, plot);
    }
    if (!current() || typeof plot !== "string" || !plot || plot === showPlot) return;
    const card = document.querySelector('#entries li[data-cid="' + CSS.escape(e.cid) + '"]');
    if (card) card.append(el("p", { class: "plot" }, plot));
  }));
}

// showActions offers, under a household's own show, to set for every
// episode at once its kind (a "show" the names made of home clips is
// home videos) or its show title: one POST /api/meta/batch.
export function showActions(s, local, done) {
  const box = $("show-header");
  if (!local) return;
  const title = el("input", { id: "show-title", placeholder: "Show title for every episode", "aria-label": "Show title for every episode" });
  const kind = el("select", { id: "show-kind", "aria-label": "Kind of every episode" },
    el("option", { value: "" }, "(keep the kind)"), el("option", { value: "other" }, "Home videos / other"),
    el("option", { value: "movie" }, "Films"), el("option", { value: "episode" }, "Episodes"));
  const status = el("span", { id: "show-status", role: "status", "aria-live": "polite" });
  const form = el("form", { id: "show-form", class: "show-form" },
    el("p", { class: "muted" }, "For every episode of this show:"), title, kind, el("button", { type: "submit" }, "Apply"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const set = {};
    if (title.value.trim()) set["titles/eng"] = title.value.trim();
    if (kind.value) set.videoType = kind.value;
    if (Object.keys(set).length === 0) { status.textContent = "Nothing to apply."; return; }
    status.textContent = "Applying…";
    try {
      const cids = await showEpisodes(s.show);
      const failed = await setEvery(cids, set);
      status.textContent = failed ? failed + " of " + cids.length + " not changed." : "Applied to " + cids.length + " files.";
      shows.delete(s.show);
      done();
    } catch (e) {
      status.textContent = "Not applied: " + e.message;
    }
  });
  box.append(form);
}

// showEpisodes lists the CIDs of every episode of a show, season by
// season, page by page.
async function showEpisodes(show) {
  const out = [];
  const seasons = await api("/api/library?show=" + encodeURIComponent(show) + "&limit=200");
  for (const se of seasons.entries) {
    for (let page = 1; ; page++) {
      const eps = await api("/api/library?show=" + encodeURIComponent(show) + "&season=" + se.season + "&limit=200&page=" + page);
      out.push(...eps.entries.map((e) => e.cid));
      if (page >= eps.pages) break;
    }
  }
  return out;
}
