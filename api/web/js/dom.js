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

// shortPeer is a peer's ID as the page shows it among words: its last
// eight characters, the whole ID in its title.
export function shortPeer(id) {
  const s = String(id || "");
  return el("code", { class: "peer-id", title: s, "data-peer": s }, s.length > 16 ? "…" + s.slice(-8) : s);
}
