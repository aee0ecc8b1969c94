// Search: the search box (as one types, or federated on Enter), the CID
// box, and the hits.

import { $, el, plural, learnNames } from "./dom.js";
import { api } from "./client.js";
import { state, go, replace, link, recordLink } from "./nav.js";
import { posterImg, hitLine, sourceLine } from "./cards.js";

let searchSeq = 0;
let shown = null; // the search on screen: its query and federated
let typingTimer = 0;

// showSearch shows the search for q, unless it is on screen already.
export function showSearch(q, federated) {
  const key = q + "\n" + federated;
  if (shown !== key) { shown = key; search(q, federated); }
}

// hideSearch takes the search off screen (an answer still coming is
// dropped).
export function hideSearch() {
  if (shown === null) return;
  shown = null;
  searchSeq++;
  $("results").replaceChildren();
  $("search-status").textContent = "";
}

async function search(q, federated) {
  const seq = ++searchSeq;
  const status = $("search-status");
  const list = $("results");
  status.textContent = "Searching…";
  list.replaceChildren();
  try {
    const res = await api("/api/search?q=" + encodeURIComponent(q) + (federated ? "&federated=1" : ""));
    if (seq !== searchSeq) return;
    learnNames(res.peerNames);
    const hits = res.hits || [];
    status.textContent = searchLine(q, federated, res, hits);
    for (const h of hits) list.append(hitItem(h));
  } catch (e) {
    if (seq === searchSeq) status.textContent = "Search failed: " + e.message;
  }
}

// searchLine counts the hits, and for a federated search whom it asked.
function searchLine(q, federated, res, hits) {
  return (hits.length === 0 ? "Nothing found for “" + q + "”" : plural(hits.length, "result") + " for “" + q + "”") +
    (federated ? " (asked " + plural(res.asked || 0, "household") + ", " + (res.fromIndex || 0) + " through the search index; " +
      plural((res.peers || []).length, "household") + " answered)" : "") + ".";
}

function hitItem(h) {
  return el("li", { class: "hit card", "data-source": h.source === "local" ? "local" : "peer" },
    link(() => ({ ...state, cid: h.cid }), { class: "art", tabindex: "-1", "aria-hidden": "true" }, posterImg(h.poster, h.source, h.title)),
    recordLink(h.cid, { class: "title" }, h.title || "(untitled)"),
    el("div", { class: "muted" }, hitLine(h)),
    sourceLine(h.source));
}

// bindSearch makes the search box and the CID box work.
export function bindSearch() {
  $("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearTimeout(typingTimer);
    const q = $("q").value.trim();
    if (q) go({ q, federated: $("federated").checked });
  });
  $("q").addEventListener("input", searchAsTyped);
  $("cid-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const cid = $("cid").value.trim();
    if (cid) go({ ...state, cid });
  });
}

// Search as one types: words match by their beginning, so every pause
// of typing searches (the URL follows, one history entry per search, not
// per letter); emptying the box goes back to the library. A federated
// search asks other households, so it waits for Enter.
function searchAsTyped() {
  clearTimeout(typingTimer);
  if ($("federated").checked) return;
  typingTimer = setTimeout(() => {
    const q = $("q").value.trim();
    if (q === state.q) return;
    const s = q ? { q } : {};
    if (state.q) {
      replace(s);
    } else if (q) {
      go(s);
    }
  }, 250);
}
