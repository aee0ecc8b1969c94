// The Duplicates view: the household's files held more than once (GET
// /api/duplicates), by content (one file under several paths) or by
// title (one film or episode as several files), each group a table of
// its copies side by side, each copy linking to its file's record.

import { $, el, fmtBytes, pad2, plural } from "./dom.js";
import { api } from "./client.js";
import { urlOf, follow, recordLink } from "./nav.js";

let seq = 0;
let shown = null; // the page of groups on screen: its key

function byOf(s) { return s.by === "title" ? "title" : "content"; }

function dupesKey(s) { return [byOf(s), s.page, s.limit].join("\n"); }

// showDuplicates shows the page of groups s names, unless it is on
// screen already.
export function showDuplicates(s) {
  renderTabs(s);
  const key = dupesKey(s);
  if (shown !== key) { shown = key; loadDuplicates(s); }
}

// forgetDuplicates has the groups load again when the view comes back.
export function forgetDuplicates() { shown = null; }

async function loadDuplicates(s) {
  const n = ++seq;
  const p = new URLSearchParams({ by: byOf(s) });
  if (s.page > 1) p.set("page", String(s.page));
  if (s.limit) p.set("limit", s.limit);
  $("dupes-status").textContent = "Loading…";
  $("dupes").setAttribute("aria-busy", "true");
  let page;
  try {
    page = await api("/api/duplicates?" + p.toString());
  } catch (e) {
    if (n !== seq) return;
    $("dupes").removeAttribute("aria-busy");
    $("dupe-groups").replaceChildren();
    $("dupes-pager").hidden = true;
    $("dupes-status").textContent = "Could not load the duplicates: " + e.message;
    shown = null;
    return;
  }
  if (n !== seq) return;
  $("dupes").removeAttribute("aria-busy");
  $("dupes-status").textContent = statusLine(page);
  $("dupe-groups").replaceChildren(...(page.groups || []).map((g) => groupTable(page.by, g)));
  renderPager(s, page);
}

// renderTabs marks the grouping s shows.
function renderTabs(s) {
  for (const a of $("dupes-by").querySelectorAll("a[data-by]")) {
    const to = { view: "duplicates", by: a.dataset.by };
    a.setAttribute("href", urlOf(to));
    a.onclick = (ev) => follow(ev, to);
    if (a.dataset.by === byOf(s)) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

function statusLine(page) {
  const what = page.by === "title" ? ["work held as several files", "works held as several files"] : ["file under several paths", "files under several paths"];
  if (page.total === 0) return "No " + what[1] + (page.loaded ? "." : " yet: the node is still reading its library.");
  if ((page.groups || []).length === 0) return "Page " + page.page + " is past the last (" + plural(page.pages, "page") + ").";
  return plural(page.total, what[0], what[1]) + " · " + fmtBytes(page.wasted) + " wasted" +
    (page.pages > 1 ? " · page " + page.page + " of " + page.pages : "");
}

function renderPager(s, page) {
  $("dupes-pager").hidden = page.pages <= 1;
  const turn = (id, n) => {
    const a = $(id);
    const to = { view: "duplicates", by: byOf(s), limit: s.limit, page: n };
    a.hidden = !(n >= 1 && n <= page.pages);
    a.setAttribute("href", urlOf(to));
    a.onclick = (ev) => follow(ev, to);
  };
  turn("dupes-prev", page.page - 1);
  turn("dupes-next", page.page + 1);
  $("dupes-page-of").textContent = "Page " + page.page + " of " + Math.max(page.pages, 1);
}

// groupTitle is what a group is: title, year, S01E02, episode title.
function groupTitle(g) {
  let t = g.title || "(untitled)";
  if (g.year) t += " (" + g.year + ")";
  if (g.season !== undefined && g.episode !== undefined) t += " S" + pad2(g.season) + "E" + pad2(g.episode);
  if (g.episodeTitle) t += " – " + g.episodeTitle;
  return t;
}

// runtime writes seconds as h:mm:ss.
function runtime(s) {
  if (!s) return "–";
  return Math.floor(s / 3600) + ":" + pad2(Math.floor(s / 60) % 60) + ":" + pad2(s % 60);
}

// groupTable is one group: a table of its copies side by side.
function groupTable(by, g) {
  const cols = by === "title" ? ["File", "Size", "Resolution", "Video", "Audio", "Runtime"] : ["Path", "Size"];
  const rows = (g.copies || []).map((c) => {
    const cells = [el("td", { class: "path" }, recordLink(c.cid, { class: "copy" }, c.path)), el("td", {}, fmtBytes(c.size))];
    if (by === "title") {
      cells.push(el("td", {}, c.resolution || "–"), el("td", {}, c.videoCodec || "–"), el("td", {}, c.audioCodec || "–"), el("td", {}, runtime(c.runtime)));
    }
    return el("tr", {}, ...cells);
  });
  const more = g.count > (g.copies || []).length ? el("p", { class: "muted" }, "and " + plural(g.count - g.copies.length, "more path")) : null;
  return el("div", { class: "dupe-group scroll", "data-key": g.key },
    el("table", {},
      el("caption", {}, groupTitle(g) + ": " + plural(g.count, "copy", "copies") + ", " + fmtBytes(g.wasted) + " wasted"),
      el("thead", {}, el("tr", {}, ...cols.map((c) => el("th", { scope: "col" }, c)))),
      el("tbody", {}, ...rows)),
    more);
}

