// A file's record: a page of its own at the top, over the list or the
// search it was opened from.

import { $, el, fmtBytes, pad2, asList, andList, plotOf, learnNames, peerText, shortPeer } from "./dom.js";
import { api, hasToken, setEvery } from "./client.js";
import { state, urlOf, link } from "./nav.js";
import { flagAt, showPlayer, downloadWithToken } from "./player.js";
import { howToPlay } from "./stream.js";
import { peerSources, findProviders } from "./sources.js";
import { episodeNav } from "./episodes.js";

let recordSeq = 0;
let shown = null; // the CID of the record on screen

// showRecord opens the record of cid, unless it is on screen already.
export function showRecord(cid) {
  if (shown === cid) return;
  shown = cid;
  openRecord(cid);
}

// closeRecord takes the record off screen (answers still coming for it
// are dropped).
export function closeRecord() {
  if (shown === null) return;
  shown = null;
  recordSeq++;
  $("record").hidden = true;
}

async function openRecord(cid) {
  if (!cid) return;
  const seq = ++recordSeq;
  const current = () => seq === recordSeq;
  showLoading(cid);
  let doc;
  try {
    doc = await api("/api/meta/" + encodeURIComponent(cid));
  } catch (e) {
    if (current()) $("record-status").textContent = "Could not open " + cid + ": " + e.message;
    return;
  }
  learnNames(doc.peerNames);
  const canonical = doc.canonical_cid || cid;
  const infos = await cidInfos(canonical, doc);
  if (!current()) return;
  const title = titleOf(doc, canonical);
  headRecord(doc, title, canonical, current);
  $("record-status").textContent = "";
  $("record-summary").textContent = summaryOf(doc).join(" · ");
  showPosterAndPlot(doc, title);
  listSubtitles(doc);
  offerFile(doc, title, canonical, current);
  fillCIDs(infos, doc, canonical);
  fillPeers(doc, canonical, current);
  showLearned(doc);
  fillEdit(doc, canonical);
  $("tree").replaceChildren(tree(doc));
  $("record-body").hidden = false;
}

function showLoading(cid) {
  $("record").hidden = false;
  $("record-title").textContent = "Record";
  $("record-status").textContent = "Loading " + cid + "…";
  $("record-body").hidden = true;
  $("close-record").setAttribute("href", urlOf({ ...state, cid: "" }));
  window.scrollTo(0, 0);
}

// cidInfos inspects every CID of the file (GET /api/cid), the canonical
// one first; one that fails is shown with its problem.
function cidInfos(canonical, doc) {
  const cids = [...new Set([canonical, ...asList(doc.cids)])];
  return Promise.all(cids.map((c) =>
    api("/api/cid/" + encodeURIComponent(c)).catch((e) => ({ input: c, codec: "?", tier: "?", rank: -1, problem: e.message }))));
}

function titleOf(doc, canonical) {
  return (doc.titles && (doc.titles.eng || Object.values(doc.titles)[0])) || doc.originalTitle ||
    (typeof doc.filePath === "string" ? doc.filePath.split("/").pop() : "") || canonical;
}

// headRecord titles the record: a film by its title; an episode
// S01E02 · The Storm, under a link to its show, with its neighbours.
function headRecord(doc, title, canonical, current) {
  const isEpisode = typeof doc.season === "number" && typeof doc.episode === "number" && doc.videoType !== "other" && doc.videoType !== "movie";
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
  episodeNav(isEpisode ? { show: showKey, season: doc.season, episode: doc.episode, cid: canonical } : null, current);
}

// summaryOf is the record's line of type, size, where the file is and
// its path.
function summaryOf(doc) {
  const bits = [];
  if (doc.mimeType) bits.push(doc.mimeType);
  if (typeof doc.sizeByte === "number") bits.push(fmtBytes(doc.sizeByte));
  if (doc.source) bits.push(doc.source === "local" ? "on this node" : "known only from " + peerText(doc.source));
  if (typeof doc.filePath === "string") bits.push(doc.filePath);
  return bits;
}

// posterOf is the CID of the file's poster, "" when it has none.
function posterOf(doc) {
  return doc.art && typeof doc.art.poster === "string" ? doc.art.poster : "";
}

// frameOf is the CID of the player's poster frame: the poster, else the
// still the node took from the video; "" for neither.
function frameOf(doc) {
  return posterOf(doc) || (typeof doc.still === "string" ? doc.still : "");
}

// showPosterAndPlot shows the poster (the node's image, or a peer's it
// fetches; none when it cannot) and the plot.
function showPosterAndPlot(doc, title) {
  const poster = $("poster");
  poster.replaceChildren();
  const posterCID = posterOf(doc);
  if (posterCID && !hasToken()) {
    const img = el("img", { src: "/api/thumb/" + encodeURIComponent(posterCID) + "?w=640", alt: "Poster of " + title, class: "poster" });
    img.addEventListener("error", () => img.remove());
    poster.append(img);
  }
  $("plot").textContent = plotOf(doc);
}

// subtitlesOf are the file's subtitles' CIDs by language and their flags.
function subtitlesOf(doc) {
  return {
    byLang: doc.subtitles && typeof doc.subtitles === "object" ? doc.subtitles : {},
    flags: doc.subtitleflags && typeof doc.subtitleflags === "object" ? doc.subtitleflags : {},
  };
}

// listSubtitles lists the subtitles by language (links to them when the
// node holds the file).
function listSubtitles(doc) {
  const subs = $("subtitles");
  subs.replaceChildren();
  const { byLang, flags } = subtitlesOf(doc);
  for (const lang of Object.keys(byLang).sort()) {
    asList(byLang[lang]).forEach((c, i) => {
      const f = flagAt(flags, lang, i);
      const label = lang + (typeof f === "string" && f ? " (" + f + ")" : "");
      subs.append(el("li", { "data-lang": lang }, doc.source === "local"
        ? el("a", { href: "/api/file/" + encodeURIComponent(c) }, label) : label, " ", el("code", { class: "cid" }, c)));
    });
  }
  $("subtitles-part").hidden = subs.children.length === 0;
}

// offerFile shows Download and the player. A file known only from peers
// has no bytes here (GET /api/file answers 404) unless a household that
// has it shares it (its bytes come from there, through this node):
// Download and the player wait for GET /api/sources to say so.
function offerFile(doc, title, canonical, current) {
  const local = doc.source === "local";
  $("peer-only").hidden = local;
  $("download-part").hidden = true;
  $("player").replaceChildren();
  $("player").dataset.cid = canonical;
  const href = "/api/file/" + encodeURIComponent(canonical);
  const dl = $("download");
  dl.href = href;
  dl.onclick = hasToken() ? (ev) => { ev.preventDefault(); downloadWithToken(href, title); } : null;
  const { byLang, flags } = subtitlesOf(doc);
  const offer = (size) => {
    dl.textContent = "Download" + (typeof size === "number" ? " (" + fmtBytes(size) + ")" : "");
    $("download-part").hidden = false;
    // The poster frame is a thumbnail: a local file's poster or still, a
    // peer's file's poster (fetched from its household); the subtitles
    // are files of this node's: a peer's file plays without them.
    const fi = doc.fileinfo && typeof doc.fileinfo === "object" ? doc.fileinfo : {};
    howToPlay(doc.mimeType, canonical, fi).then((how) => {
      if ($("player").dataset.cid !== canonical) return; // another record since
      showPlayer(how, href, title, canonical, local ? frameOf(doc) : posterOf(doc), local ? byLang : {}, flags, Number(fi.duration) || 0);
    });
  };
  if (local) {
    offer(doc.sizeByte);
  } else {
    peerSources(canonical, current, (src) => offer(typeof doc.sizeByte === "number" ? doc.sizeByte : src.size));
  }
}

// fillCIDs lists every CID of the file, best rank first, with its codec,
// tier and rank; the canonical one is highlighted, and one only peers
// vouch for says whose records it comes from.
function fillCIDs(infos, doc, canonical) {
  infos.sort((a, b) => (b.rank - a.rank) || String(a.input).localeCompare(String(b.input)));
  const learned = (doc.learned && typeof doc.learned === "object") ? doc.learned : {};
  $("cids").tBodies[0].replaceChildren(...infos.map((info) => {
    const c = info.normalized || info.input;
    const isCanon = c === canonical;
    const from = doc.source === "local" ? asList(learned[c]) : [];
    const n = from.length;
    return el("tr", { class: isCanon ? "canonical" : "", "data-cid": c, "aria-current": isCanon ? "true" : null },
      el("td", {}, el("code", { class: "cid" }, c), isCanon ? el("strong", { class: "badge" }, "canonical") : null,
        n > 0 ? el("div", { class: "muted learned" }, "from " + (n === 1 ? "1 peer's record" : n + " peers' records") + ", not this node's bytes: ", ...andList(from.map(shortPeer))) : null),
      el("td", {}, info.codec + (info.multihash ? " / " + info.multihash : "")),
      el("td", { class: "tier" }, info.tier),
      el("td", { class: "rank" }, String(info.rank), info.problem ? el("div", { class: "muted" }, info.problem) : null));
  }));
}

// fillPeers lists the file's providers (asking the DHT for more of a
// file known only from peers) and its duplicates.
function fillPeers(doc, canonical, current) {
  const listInto = (id, items, empty, show) => {
    const ul = $(id);
    ul.replaceChildren();
    if (items.length === 0) ul.append(el("li", { class: "muted" }, empty));
    for (const it of items) ul.append(el("li", {}, show(it)));
  };
  listInto("providers", asList(doc.providers), "none known", shortPeer);
  $("providers-status").textContent = "";
  if (doc.source !== "local") findProviders(canonical, asList(doc.providers), current);
  const dups = asList(doc.duplicates);
  listInto("duplicates", dups, "none", (d) => el("code", {}, d));
  if (typeof doc.duplicateCount === "number" && doc.duplicateCount > dups.length) {
    $("duplicates").append(el("li", { class: "muted" }, "… " + (doc.duplicateCount - dups.length) + " more"));
  }
}

// tree is the document's raw metadata, folded by object.
function tree(v) {
  if (!v || typeof v !== "object") return el("span", { class: "val" }, String(v));
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
  // A home video's name gives no year: only the household's own edit.
  const homeVideo = doc.videoType === "other" && !asList(doc.edited).includes("movieYear");
  if (typeof doc.movieYear === "number" && !homeVideo) out.push(String(doc.movieYear));
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

// fieldOf reads a flat field ("plot/eng") out of a document's nested
// metadata; "" when it has none.
function fieldOf(doc, name) {
  let v = doc;
  for (const seg of name.split("/")) {
    if (v === null || typeof v !== "object" || !(seg in v)) return "";
    v = v[seg];
  }
  return v === null || typeof v === "object" ? "" : String(v);
}

// learnedLabels name the fields other households may fill in on the
// household's own file (the document's shownFrom).
const learnedLabels = {
  "titles/eng": "title", originalTitle: "original title", movieYear: "year", year: "year", imdbid: "IMDb ID",
  tmdbid: "TMDB ID", tvdbid: "TVDB ID", genre: "genres", rating: "rating", episodeTitle: "episode title",
  "art/poster": "poster", "art/fanart": "fanart",
};

// showLearned says which of a local file's fields other households
// filled in, and which: "From other households: title and plot from
// Alice's NAS …". The household's own fields and edits are its own.
function showLearned(doc) {
  const line = $("record-learned");
  line.replaceChildren();
  const from = doc.shownFrom && typeof doc.shownFrom === "object" ? doc.shownFrom : {};
  const byPeer = new Map();
  for (const [field, src] of Object.entries(from)) {
    if (typeof src !== "string" || ["own", "name", "edit"].includes(src)) continue;
    const label = learnedLabels[field] || (field.startsWith("plot/") ? "plot" : field.startsWith("titles/") ? "title (" + field.slice(7) + ")" : field);
    if (!byPeer.has(src)) byPeer.set(src, []);
    if (!byPeer.get(src).includes(label)) byPeer.get(src).push(label);
  }
  line.hidden = byPeer.size === 0;
  if (line.hidden) return;
  line.append("From other households: ");
  let first = true;
  for (const [peer, labels] of byPeer) {
    if (!first) line.append("; ");
    first = false;
    line.append(...andList(labels.sort()), " from ", shortPeer(peer));
  }
  line.append(". What this household sets (its NFO, Edit) wins.");
}

let editing = null; // { cid, shown: {field: value} } of the record's form

// fillEdit fills the Edit form with the household's file's fields (a
// file known only from peers is not the household's to edit).
function fillEdit(doc, canonical) {
  const local = doc.source === "local";
  $("edit").hidden = !local;
  $("edit-status").textContent = "";
  if (!local) { editing = null; return; }
  const edited = new Set(asList(doc.edited));
  const shown = {};
  for (const input of $("edit-form").querySelectorAll("[data-field]")) {
    const f = input.dataset.field;
    let v;
    if (input.dataset.list) {
      v = asList(doc[f]).join(", ");
      if ([...edited].some((e) => e.startsWith(f + "/"))) edited.add(f);
    } else {
      v = fieldOf(doc, f);
    }
    input.value = v;
    shown[f] = v;
    input.closest("label").classList.toggle("edited", edited.has(f));
  }
  // An episode's title is its show's.
  $("edit-title-label").textContent = doc.videoType === "episode" || (typeof doc.season === "number" && doc.videoType !== "movie" && doc.videoType !== "other") ? "Show" : "Title";
  const fp = typeof doc.filePath === "string" ? doc.filePath : "";
  editing = { cid: canonical, shown, doc, folder: fp.slice(0, fp.lastIndexOf("/")) };
  $("folder-name").textContent = editing.folder || "/";
  $("folder-kind").value = "";
  $("folder-title").value = "";
  $("folder-status").textContent = "";
}

// folderFiles lists the CIDs of the household's videos below dir, page
// by page.
async function folderFiles(dir) {
  const out = [];
  for (let page = 1; ; page++) {
    const p = await api("/api/library?folder=" + encodeURIComponent(dir || "/") + "&limit=200&page=" + page);
    out.push(...p.entries.map((e) => e.cid));
    if (page >= p.pages) return out;
  }
}

// saveEdit sends what the form changed as one PATCH: a cleared field is
// null (the edit dropped), a list field its items by index.
async function saveEdit(ev) {
  ev.preventDefault();
  if (!editing) return;
  const { cid, doc } = editing;
  const before = editing.shown;
  const patch = {};
  for (const input of $("edit-form").querySelectorAll("[data-field]")) {
    const f = input.dataset.field;
    const v = input.value.trim();
    if (v === before[f]) continue;
    if (input.dataset.list) {
      const items = v.split(",").map((s) => s.trim()).filter((s) => s !== "");
      const old = asList(doc[f]).length;
      for (let i = 0; i < Math.max(items.length, old); i++) patch[f + "/" + i] = i < items.length ? items[i] : null;
    } else {
      patch[f] = v === "" ? null : v;
    }
  }
  if (Object.keys(patch).length === 0) {
    $("edit-status").textContent = "Nothing changed.";
    return;
  }
  $("edit-status").textContent = "Saving…";
  try {
    await api("/api/meta/" + encodeURIComponent(cid), { method: "PATCH", body: patch });
  } catch (e) {
    $("edit-status").textContent = "Not saved: " + e.message;
    return;
  }
  shownAgain(cid);
}

// applyFolder sets the kind or the show title of every video in the
// record's folder (this file among them), 1,000 files a POST
// /api/meta/batch: how a household says "this folder is home videos"
// or "these are the episodes of one show".
async function applyFolder(ev) {
  ev.preventDefault();
  if (!editing) return;
  const set = {};
  const title = $("folder-title").value.trim();
  if (title) set["titles/eng"] = title;
  if ($("folder-kind").value) set.videoType = $("folder-kind").value;
  const status = $("folder-status");
  if (Object.keys(set).length === 0) { status.textContent = "Nothing to apply."; return; }
  status.textContent = "Applying…";
  try {
    const cids = await folderFiles(editing.folder);
    const failed = await setEvery(cids, set);
    if (failed) { status.textContent = failed + " of " + cids.length + " not changed."; return; }
  } catch (e) {
    status.textContent = "Not applied: " + e.message;
    return;
  }
  shownAgain(editing.cid);
}

// shownAgain reads the record anew after a save, the Edit form open.
function shownAgain(cid) {
  shown = null;
  showRecord(cid);
  $("edit").open = true;
}

// bindEdit wires the Edit form once.
export function bindEdit() {
  $("edit-form").addEventListener("submit", saveEdit);
  $("folder-form").addEventListener("submit", applyFolder);
}
