// Where a file known only from peers is: the households its bytes can
// come from (GET /api/sources), said in words when none sends it, and
// who the DHT says has it (GET /api/providers).

import { $, el, plural, asList, andList, shortPeer } from "./dom.js";
import { api } from "./client.js";

// SOURCE_WORDS say what each answer of a peer's household (GET
// /api/sources, providers[].state) means, of one household and of
// several.
const SOURCE_WORDS = {
  "does not share": ["does not share its files (it does not run --share-files)", "do not share their files (they do not run --share-files)"],
  relayed: ["is reached only through a relay, which carries too little for a file: its bytes need a direct connection",
    "are reached only through a relay, which carries too little for a file: their bytes need a direct connection"],
  unreachable: ["could not be reached", "could not be reached"],
  "no answer": ["did not answer", "did not answer"],
  shares: ["shares its files but did not send this one", "share their files but did not send this one"],
};

// unavailableWords say why a file known only from peers cannot be
// played or downloaded here: what each household that has it answered,
// else the node's reason.
export function unavailableWords(src) {
  const lead = "It cannot be played or downloaded here: ";
  const by = new Map();
  for (const p of Array.isArray(src.providers) ? src.providers : []) {
    if (!p || !SOURCE_WORDS[p.state]) return [lead + String(src.reason || "no household that has it sent it").replace(/\.$/, "") + "."];
    if (!by.has(p.state)) by.set(p.state, []);
    by.get(p.state).push(p.peer);
  }
  if (by.size === 0) return [lead + String(src.reason || "no household that has it is known").replace(/\.$/, "") + "."];
  const out = [lead];
  for (const state of Object.keys(SOURCE_WORDS)) {
    const peers = by.get(state);
    if (!peers) continue;
    if (out.length > 1) out.push("; ");
    const one = peers.length === 1;
    out.push(one ? "the household " : "the households ", ...andList(peers.map(shortPeer)), " " + SOURCE_WORDS[state][one ? 0 : 1]);
  }
  out.push(".");
  return out;
}

// peerSources asks where the bytes of a file known only from peers can
// come from (GET /api/sources asks its households for the file's root:
// up to some 15 s when none answers) and says it; offer(sources) shows
// Download and the player when a household that shares it sent it.
// current reports whether the record is still the one on screen.
export async function peerSources(cid, current, offer) {
  const line = $("sources");
  line.replaceChildren("Looking for a household that shares it…");
  let src;
  try {
    src = await api("/api/sources/" + encodeURIComponent(cid), { ask: false });
  } catch (e) {
    if (current()) line.replaceChildren(sourcesFailed(e));
    return;
  }
  if (!current()) return;
  if (!src.available) {
    line.replaceChildren(...unavailableWords(src));
    return;
  }
  const from = (Array.isArray(src.providers) ? src.providers : []).filter((p) => p && p.state === "shares").map((p) => p.peer);
  line.replaceChildren(...(from.length === 0 ? ["From the households that share it."] :
    ["From " + plural(from.length, "household") + " that share" + (from.length === 1 ? "s" : "") + " it: ", ...andList(from.map(shortPeer)), "."]));
  offer(src);
}

// sourcesFailed says why GET /api/sources gave no answer.
function sourcesFailed(e) {
  if (e.status === 401 || e.status === 403) {
    return "Fetching files from other households needs this node's API token: without it, only this household's own files play and download here.";
  }
  if (e.status === 404) return "No household that has it is known now: it cannot be played or downloaded here.";
  return "Could not find out where its bytes could come from: " + e.message;
}

// findProviders asks the DHT (GET /api/providers) who has a file known
// only from peers, and adds who it names to the peers that sent it.
export async function findProviders(cid, known, current) {
  $("providers-status").textContent = "Asking the DHT who has it…";
  let res;
  try {
    res = await api("/api/providers/" + encodeURIComponent(cid));
  } catch (e) {
    if (current()) $("providers-status").textContent = "The DHT lookup failed: " + e.message;
    return;
  }
  if (!current()) return;
  const found = asList(res.providers);
  const all = [...new Set([...known, ...found])];
  const ul = $("providers");
  if (all.length > 0) ul.replaceChildren(...all.map((p) => el("li", {}, shortPeer(p))));
  $("providers-status").textContent = "The DHT names " + plural(found.length, "provider") + ".";
}
