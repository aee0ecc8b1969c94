// The household's members: "Who's watching?" (the member this browser
// chose, kept in the cookie metamesh_member, which the node reads too),
// and what the chosen member watched, kept by the node for every
// device: the Continue watching row, the marks on cards, where the
// player resumes and what it saves, and the next episode.

import { $, el, pad2 } from "./dom.js";
import { api } from "./client.js";
import { state, go, recordLink, link } from "./nav.js";
import { posterImg, hitLine } from "./cards.js";

const COOKIE = "metamesh_member";
let chosen = readCookie();
let members = [];
let marks = new Map(); // canonical CID → {position, duration, watched}
let onChange = () => {};
let autoplay = ""; // the CID the next player plays at once (a Play button)

function readCookie() {
  for (const part of document.cookie.split(";")) {
    const [k, v] = part.trim().split("=");
    if (k === COOKIE && v) {
      try { return decodeURIComponent(v); } catch (e) { return ""; }
    }
  }
  return "";
}

// member is the member this browser chose, "" for none (then the
// player keeps its place in this browser only).
export function member() { return chosen; }

// memberPath is the path of the chosen member's resource rest.
function memberPath(rest) { return "/api/members/" + encodeURIComponent(chosen) + rest; }

// fmtClock writes seconds as 1:02:03 or 12:34.
export function fmtClock(sec) {
  const s = Math.max(0, Math.floor(sec));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + ":" + pad2(m) : String(m)) + ":" + pad2(s % 60);
}

// bindMembers loads the members into "Who's watching?" and makes its
// buttons and form work; changed runs when the chosen member changes.
export async function bindMembers(changed) {
  onChange = changed;
  $("member-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = $("member-name").value.trim();
    try {
      await api("/api/members", { method: "POST", body: { name } });
      $("member-name").value = "";
      $("member-status").textContent = "";
      $("add-member").open = false;
      await loadMembers();
      choose(name);
    } catch (e) {
      $("member-status").textContent = e.message;
    }
  });
  await loadMembers();
  if (chosen && !members.includes(chosen)) choose("");
  else await loadMarks();
}

async function loadMembers() {
  try {
    members = (await api("/api/members")).members || [];
  } catch (e) {
    members = [];
    $("member-status").textContent = "Members: " + e.message;
  }
  renderChooser();
}

function renderChooser() {
  const button = (name, label) => el("button", { type: "button", class: "member", "data-member": name,
    "aria-pressed": chosen === name ? "true" : "false", onclick: () => choose(name) }, label);
  $("who-members").replaceChildren(...members.map((m) => button(m, m)), button("", "No one"));
}

// choose makes name this browser's member ("" for none).
export async function choose(name) {
  chosen = name;
  document.cookie = COOKIE + "=" + encodeURIComponent(name) + "; path=/; SameSite=Strict; max-age=" + (name ? 31536000 : 0);
  renderChooser();
  await loadMarks();
  onChange();
}

// loadMarks reads what the chosen member played, and marks the cards on
// screen.
async function loadMarks() {
  marks = new Map();
  if (chosen) {
    try {
      for (const e of (await api(memberPath("/watch"))).entries || []) marks.set(e.cid, e);
    } catch (e) { /* no marks: the cards show none */ }
  }
  markCards();
}

// markCards gives the file cards on screen their marks: a check for a
// watched file, a bar of how far for one in progress.
export function markCards() {
  for (const card of document.querySelectorAll("#entries li.file.card[data-cid], #results li[data-cid]")) {
    for (const old of card.querySelectorAll(".watch-mark")) old.remove();
    const m = marks.get(card.dataset.cid);
    if (!m) continue;
    if (m.watched) {
      card.append(el("span", { class: "badge watched watch-mark", title: "Watched", "aria-label": "Watched" }, "✓ watched"));
    } else if (m.position > 0) {
      card.append(el("progress", { class: "watch-mark", max: String(m.duration), value: String(m.position), "aria-label": "Watched to " + fmtClock(m.position) }));
    }
  }
}

// showContinue shows the chosen member's Continue watching row on the
// first page of Recently added, and hides it elsewhere.
export async function showContinue(s) {
  const row = $("continue");
  const here = chosen && !s.q && !s.show && (!s.view || s.view === "recent") && !(s.page > 1);
  if (!here) { row.hidden = true; return; }
  let a;
  try {
    a = await api(memberPath("/continue"));
  } catch (e) {
    row.hidden = true;
    return;
  }
  const next = (a.next || []).map((n) => nextCard(n.episode));
  const going = (a.entries || []).filter((e) => e.file).map(continueCard);
  $("continue-list").replaceChildren(...next, ...going);
  row.hidden = next.length + going.length === 0;
}

function episodeName(e) {
  return "S" + pad2(e.season) + "E" + pad2(e.episode) + (e.episodeTitle ? " · " + e.episodeTitle : "");
}

function continueCard(w) {
  const f = w.file;
  return el("li", { class: "card continue", "data-cid": w.cid },
    link(() => ({ ...state, cid: w.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(f.poster, f.source, f.title)),
    recordLink(w.cid, { class: "title" }, f.title || "(untitled)"),
    el("div", { class: "muted" }, hitLine({ ...f, size: undefined, fileType: "" })),
    el("progress", { max: String(w.duration), value: String(w.position), "aria-label": "Watched to " + fmtClock(w.position) }),
    el("div", { class: "muted" }, fmtClock(w.duration - w.position) + " left"));
}

function nextCard(e) {
  return el("li", { class: "card next-up", "data-cid": e.cid },
    link(() => ({ ...state, cid: e.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(e.poster, e.source, e.title)),
    recordLink(e.cid, { class: "title" }, e.title),
    el("div", { class: "muted" }, "Next: " + episodeName(e)),
    playButton(e.cid));
}

function playButton(cid) {
  return el("button", { type: "button", class: "play-next", onclick: () => { autoplay = cid; go({ ...state, cid }); } }, "▶ Play");
}

// keepWatching makes media resume where the chosen member left the file
// cid (on any device: the node keeps it), offering Resume or Start over,
// save where it is every 10 seconds of playing, on pause and at the end,
// and at the end of an episode offer the next one.
export function keepWatching(media, cid) {
  const base = memberPath("/watch/" + encodeURIComponent(cid));
  const name = chosen;
  const play = autoplay === cid;
  autoplay = "";
  let lastSave = 0;
  const save = (ended) => {
    const d = media.duration;
    if (!isFinite(d) || d <= 0 || chosen !== name) return;
    lastSave = Date.now();
    const body = { position: Math.min(media.currentTime, d), duration: d, watched: !!ended };
    marks.set(cid, { cid, ...body, watched: body.watched || body.position >= 0.9 * d });
    return api(base, { method: "PUT", body }).catch(() => {});
  };
  media.addEventListener("timeupdate", () => {
    if (!media.paused && Date.now() - lastSave >= 10000) save(false);
  });
  media.addEventListener("pause", () => { if (!media.ended) save(false); });
  media.addEventListener("ended", async () => {
    await save(true);
    offerNext(cid);
  });
  const ready = (f) => (media.readyState >= 1 ? f() : media.addEventListener("loadedmetadata", f, { once: true }));
  api(base).then((w) => {
    if (!w || w.watched || !(w.position >= 1) || !(w.position < w.duration)) {
      if (play) ready(() => media.play().catch(() => {}));
      return;
    }
    ready(() => { media.currentTime = w.position; });
    const at = fmtClock(w.position);
    const offer = el("p", { id: "resume-offer" },
      el("button", { type: "button", id: "resume", onclick: () => { offer.remove(); ready(() => { media.currentTime = w.position; media.play().catch(() => {}); }); } }, "Resume from " + at),
      " ",
      el("button", { type: "button", id: "start-over", onclick: () => { offer.remove(); ready(() => { media.currentTime = 0; media.play().catch(() => {}); }); } }, "Start over"));
    media.before(offer);
    if (play) ready(() => media.play().catch(() => {}));
  }).catch(() => {
    if (play) ready(() => media.play().catch(() => {}));
  });
}

// offerNext shows the episode after cid, when there is one, with Play.
async function offerNext(cid) {
  if ($("next-episode").hidden) return; // a film, or a show's last episode
  let n;
  try {
    n = await api(memberPath("/next/" + encodeURIComponent(cid)), { ask: false });
  } catch (e) {
    return; // a film, or a show's last episode
  }
  if (state.cid !== cid) return;
  const e = n.episode;
  const p = el("p", { id: "next-up" }, "Next: " + episodeName(e) + " ", playButton(e.cid));
  const old = $("next-up");
  if (old) old.replaceWith(p); else $("player").append(p);
}
