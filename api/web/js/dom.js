// The page's small DOM and text helpers. Text from the API is only ever
// set with textContent (or appended as text), never as HTML.

export const $ = (id) => document.getElementById(id);

// el builds an element with attributes and children (strings become text).
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

export function fmtBytes(n) {
  if (typeof n !== "number" || !isFinite(n)) return "";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + u[i];
}

export function pad2(n) { return String(n).padStart(2, "0"); }

// plural counts: plural(1, "peer") is "1 peer", plural(2, "address",
// "addresses") "2 addresses".
export function plural(n, one, many) {
  return n + " " + (n === 1 ? one : (many || one + "s"));
}

// fmtTime shows an RFC 3339 time in the browser's locale (as given when it
// does not parse).
export function fmtTime(s) {
  const d = new Date(s);
  return isNaN(d.getTime()) ? String(s) : d.toLocaleString();
}

// asList flattens a metadata value (a string, a list, an object of
// either) into a list of strings.
export function asList(v) {
  if (Array.isArray(v)) return v.map(String);
  if (v && typeof v === "object") return Object.values(v).flatMap(asList);
  if (typeof v === "string" && v) return [v];
  return [];
}

// plotOf is a document's plot: the English one, else the first; "" when
// it has none.
export function plotOf(doc) {
  const plot = doc.plot && typeof doc.plot === "object" ? (doc.plot.eng || Object.values(doc.plot)[0]) : "";
  return typeof plot === "string" ? plot : "";
}

// andList joins nodes as words do: "a", "a and b", "a, b and c".
export function andList(nodes) {
  const out = [];
  nodes.forEach((n, i) => {
    if (i > 0) out.push(i === nodes.length - 1 ? " and " : ", ");
    out.push(n);
  });
  return out;
}

// codeList fills the list id with one <code> item per entry, or a muted
// item saying empty.
export function codeList(id, items, empty) {
  $(id).replaceChildren(...(items.length === 0 ? [el("li", { class: "muted" }, empty)] :
    items.map((a) => el("li", {}, el("code", {}, a)))));
}

// peerNames are the household names peers claimed, by peer ID, as the
// API's answers carry them ("peerNames" of /api/meta, /api/search and
// /api/library; "name" of /api/peers): what the page shows instead of a
// 52-character ID. A name is the household's own claim, verified by no
// one.
const peerNames = new Map();

// learnNames keeps the names of an answer's "peerNames" object.
export function learnNames(names) {
  if (!names || typeof names !== "object") return;
  for (const [id, name] of Object.entries(names)) learnName(id, name);
}

// learnName keeps one peer's name.
export function learnName(id, name) {
  if (typeof id === "string" && typeof name === "string" && name !== "") peerNames.set(id, name);
}

// idEnd is the end of a peer ID as the page shows it: its last eight
// characters.
function idEnd(s) {
  return s.length > 16 ? "…" + s.slice(-8) : s;
}

// peerText is a peer as plain words: the name its household claims and
// the end of its ID ("Alice's NAS …RReYZ2fvJ"), or the end of its ID
// alone when it sent no name.
export function peerText(id) {
  const s = String(id || "");
  const name = peerNames.get(s);
  return name ? name + " " + idEnd(s) : idEnd(s);
}

// shortPeer is a peer as the page shows it among words: the name its
// household claims followed by the end of its ID, or the end of its ID
// alone when it sent none; the whole ID in its title (and data-peer).
// The end of the ID is always there: two households may claim the same
// name (or one may take another's), their IDs tell them apart.
export function shortPeer(id) {
  const s = String(id || "");
  const name = peerNames.get(s);
  if (!name) return el("code", { class: "peer-id", title: s, "data-peer": s }, idEnd(s));
  return el("span", { class: "peer-name", title: s, "data-peer": s }, name, " ", el("code", { class: "peer-id" }, idEnd(s)));
}
