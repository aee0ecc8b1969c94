// The parts of a card that search hits and library entries share: the
// picture, the line of facts under the title, and where the file is.

import { el, fmtBytes, pad2, shortPeer } from "./dom.js";
import { hasToken } from "./client.js";

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

// hitLine is what a card says under its title: year, S01E02, episode
// title, file type and size.
export function hitLine(h) {
  const parts = [];
  if (h.year) parts.push(String(h.year));
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
