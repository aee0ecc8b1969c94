// An episode's neighbours: its record links to the episodes before and
// after it in its show.

import { $, pad2 } from "./dom.js";
import { api } from "./client.js";
import { urlOf, follow } from "./nav.js";

// episodeNav links an episode's record to the episodes before and after
// it in its show (the next season's first after a season's last); ep is
// null for a film. current reports whether the record is still the one
// on screen.
export async function episodeNav(ep, current) {
  const nav = $("episode-nav");
  nav.hidden = true;
  const prev = $("prev-episode"), next = $("next-episode");
  prev.hidden = next.hidden = true;
  if (!ep) return;
  const order = await showOrder(ep.show);
  if (!order || !current()) return;
  const i = order.findIndex((e) => e.cid === ep.cid || (e.season === ep.season && e.episode === ep.episode));
  if (i < 0) return;
  const to = (a, e, word) => {
    a.hidden = false;
    const s = { show: ep.show, season: String(e.season), cid: e.cid };
    a.setAttribute("href", urlOf(s));
    a.textContent = word + ": S" + pad2(e.season) + "E" + pad2(e.episode) + (e.episodeTitle ? " · " + e.episodeTitle : "");
    a.dataset.cid = e.cid;
    a.onclick = (ev) => follow(ev, s);
  };
  if (i > 0) to(prev, order[i - 1], "Previous");
  if (i < order.length - 1) to(next, order[i + 1], "Next");
  nav.hidden = prev.hidden && next.hidden;
}

// showOrder lists a show's episodes in order, seasons after seasons; null
// when it is not a show of this library.
async function showOrder(show) {
  let seasons;
  try {
    seasons = await api("/api/library?show=" + encodeURIComponent(show) + "&limit=200");
  } catch (e) {
    return null; // not a show of this library: no neighbours to link
  }
  const order = [];
  for (const se of seasons.entries || []) {
    try {
      const page = await api("/api/library?show=" + encodeURIComponent(show) + "&season=" + se.season + "&limit=200");
      for (const e of page.entries || []) order.push(e);
    } catch (e) { /* a season gone meanwhile */ }
  }
  return order;
}
