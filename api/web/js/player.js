// The record's player and Download: the media element with its poster
// frame, subtitles and the place the chosen member (or this browser)
// left it; with a token,
// the file fetched with it first.

import { $, el, asList } from "./dom.js";
import { hasToken, fetchBlob } from "./client.js";
import { playStream } from "./stream.js";
import { member, keepWatching } from "./members.js";

// flagAt is the flags (default, forced, …) of the i-th subtitle of lang:
// flags[lang] is a list, or an object when only some have flags.
export function flagAt(flags, lang, i) {
  const fl = flags[lang];
  return Array.isArray(fl) ? fl[i] : (fl && typeof fl === "object" ? fl[String(i)] : "");
}

// showPlayer puts the player of how.kind ("video", "audio", or "" for
// none) of the file at href in the record: with its poster frame (the
// thumbnail of posterCID), its subtitles, and resuming where this
// browser left it; how.stream (the node's status of a file this browser
// cannot play as it is, stream.js) plays the node's converted stream,
// whose bar spans duration seconds. With a token, a file played as it
// is gets a button that loads it (a <video> cannot send the token).
export function showPlayer(how, href, title, canonical, posterCID, byLang, flags, duration) {
  const player = $("player");
  player.replaceChildren();
  const kind = how.kind;
  if (kind && (how.stream || !hasToken())) {
    const media = el(kind, { controls: true, preload: "metadata", src: how.stream ? null : href, "aria-label": "Play " + title,
      poster: kind === "video" && posterCID ? "/api/thumb/" + encodeURIComponent(posterCID) + "?w=640" : null });
    if (kind === "video") addTracks(media, byLang, flags);
    resumable(media, canonical);
    player.append(media);
    if (how.stream) {
      const src = how.stream.source;
      const note = el("p", { class: "stream-note", role: "status", hidden: true });
      player.append(el("p", { class: "stream-why" }, "This browser cannot play this file as it is (" +
        [src.container, src.video, src.audio].filter(Boolean).join(", ") + "): the node converts it as it plays."), note);
      playStream(media, canonical, how.stream, duration, note);
    }
  } else if (kind) {
    player.append(el("button", { type: "button", onclick: () => playWithToken(kind, href, title, canonical) }, "Load player"));
  }
}

// addTracks gives a video its subtitles as <track>s (WebVTT, converted
// by the node), labelled by language; the one flagged default, else a
// forced one, plays at once.
function addTracks(media, byLang, flags) {
  let chosen = null;
  for (const lang of Object.keys(byLang).sort()) {
    asList(byLang[lang]).forEach((c, i) => {
      const f = String(flagAt(flags, lang, i) || "");
      const track = el("track", { kind: "subtitles", src: "/api/subtitle/" + encodeURIComponent(c), srclang: lang.slice(0, 2),
        label: lang + (f ? " (" + f + ")" : ""), "data-cid": c });
      if (f.includes("default") || (!chosen && f.includes("forced"))) chosen = track;
      media.append(track);
    });
  }
  if (chosen) chosen.setAttribute("default", "");
}

// resumable plays on from where the chosen member left the file, on any
// device (members.js); with no member chosen, from where this browser
// left it (kept in the browser, by CID), forgotten at the end.
function resumable(media, cid) {
  if (member()) {
    keepWatching(media, cid);
    return;
  }
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

export async function downloadWithToken(href, name) {
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

async function playWithToken(kind, href, title, canonical) {
  try {
    const url = await fetchBlob(href);
    const media = el(kind, { controls: true, src: url, "aria-label": "Play " + title });
    $("player").replaceChildren(media);
    resumable(media, canonical);
  } catch (e) {
    $("record-status").textContent = "Could not load the file: " + e.message;
  }
}
