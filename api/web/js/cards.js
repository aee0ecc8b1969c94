// The parts of a card that search hits and library entries share: the
// picture, the line of facts under the title, and where the file is;
// and the cards of a list with its pager, as this household's lists and
// another's show them.

import { $, el, fmtBytes, pad2, plural, shortPeer } from "./dom.js";
import { hasToken } from "./client.js";
import { state, urlOf, follow, link, recordLink } from "./nav.js";

// posterImg is a card's picture: the poster's thumbnail (a peer's file's
// poster too: the node fetches it from the households that name it), or
// a placeholder when the file has none or the node cannot serve it.
export function posterImg(poster, source, title) {
  const ph = () => el("div", { class: "placeholder", role: "img", "aria-label": "No poster" }, (title || "?").trim().charAt(0).toUpperCase() || "?");
  if (!poster || hasToken()) return ph();
  const img = el("img", { src: "/api/thumb/" + encodeURIComponent(poster) + "?w=320", alt: "", loading: "lazy", class: "thumb" });
  img.addEventListener("error", () => img.replaceWith(ph()));
  return img;
}

// hitLine is what a card says under its title: the day a home video
// was recorded (else the year), S01E02, episode title, file type and
// size.
export function hitLine(h) {
  const parts = [];
  if (h.recorded) parts.push(fmtRecorded(h.recorded));
  else if (h.year) parts.push(String(h.year));
  if (h.season !== undefined && h.season !== null && h.season !== "") {
    parts.push("S" + pad2(h.season) + (h.episode !== undefined && h.episode !== null && h.episode !== "" ? "E" + pad2(h.episode) : ""));
  }
  if (h.episodeTitle) parts.push(h.episodeTitle);
  if (h.fileType) parts.push(h.fileType);
  if (typeof h.size === "number") parts.push(fmtBytes(h.size));
  return parts.join(" · ");
}

// sourceLine says where a file is: on this node, or known only from a
// peer (its household's name, the whole ID in its title).
export function sourceLine(source) {
  if (source === "local") return el("div", { class: "muted source" }, "on this node");
  return el("div", { class: "muted source peer" }, el("span", { class: "badge peer" }, "known from a peer"), " ",
    source ? shortPeer(source) : "unknown peer");
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// fmtRecorded writes the day a video was recorded as people read it:
// 2019-03-14 → "14 Mar 2019", a month 2019-03 → "Mar 2019", a year as it
// is; anything else as the record has it.
export function fmtRecorded(d) {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(d);
  if (!m || (m[2] && !MONTHS[Number(m[2]) - 1])) return d;
  return [m[3] ? String(Number(m[3])) : "", m[2] ? MONTHS[Number(m[2]) - 1] : "", m[1]].filter(Boolean).join(" ");
}

// seasonName names a season as its card and trail do: season 0 holds a
// show's specials.
export function seasonName(n) { return n === 0 ? "Specials" : "Season " + n; }

// renderCards shows a page of a list as cards, and its pager (s is the
// list's state, the pager's pages are s's). This household's lists and
// another household's share them; at tells them apart: at.list is what a
// show's or a season's card leads to, less its show and season ({} for
// this household's lists); at.peer, for another household's list, the
// household whose files they are (no card says where its file is).
export function renderCards(s, page, at) {
  $("entries").replaceChildren(...(page.entries || []).map((e) => entryCard(page, e, at)));
  renderPager(s, page);
}

// entryCard is one card of a list: a poster (or a placeholder), the
// title, and under it the facts of a file or the counts of a show or a
// season.
function entryCard(page, e, at) {
  if (e.kind === "show") {
    const to = { ...at.list, show: e.show };
    return el("li", { class: "entry show card", "data-show": e.show },
      link(to, { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, at.peer || "local", e.title)),
      link(to, { class: "title", "data-show": e.show }, e.title || e.show),
      el("div", { class: "muted" }, plural(e.seasons, "season") + " · " + plural(e.episodes, "episode")));
  }
  if (e.kind === "season") {
    const to = { ...at.list, show: e.show, season: String(e.season) };
    return el("li", { class: "entry season card", "data-season": String(e.season) },
      link(to, { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, at.peer || "local", seasonName(e.season))),
      link(to, { class: "title", "data-season": String(e.season) }, seasonName(e.season)),
      el("div", { class: "muted" }, plural(e.episodes, "episode")));
  }
  return fileCard(page, e, at);
}

function fileCard(page, e, at) {
  const episodes = page.view === "episodes";
  const title = episodes
    ? (e.episode !== undefined ? "Episode " + e.episode : "") + (e.episodeTitle ? (e.episode !== undefined ? ": " : "") + e.episodeTitle : "")
    : e.title;
  // The record opens with the list's state under it (from an episode
  // list: the show and season, where its neighbours are).
  return el("li", { class: "entry file card", "data-cid": e.cid, "data-source": e.source === "local" ? "local" : "peer" },
    link(() => ({ ...state, cid: e.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, at.peer || e.source, e.title)),
    recordLink(e.cid, { class: "title" }, title || e.title || "(untitled)"),
    el("div", { class: "muted" }, hitLine(episodes ? { ...e, episodeTitle: "" } : e)),
    at.peer || e.source === "local" ? null : sourceLine(e.source));
}

// renderPager shows the pager of a list of several pages: the previous
// and the next page of s, and where page is.
function renderPager(s, page) {
  $("pager").hidden = page.pages <= 1;
  const turn = (id, n) => {
    const a = $(id);
    a.hidden = !(n >= 1 && n <= page.pages);
    a.setAttribute("href", urlOf({ ...s, page: n, cid: "" }));
    a.onclick = (ev) => follow(ev, { ...s, page: n, cid: "" });
  };
  turn("prev", page.page - 1);
  turn("next", page.page + 1);
  $("page-of").textContent = "Page " + page.page + " of " + Math.max(page.pages, 1);
}
