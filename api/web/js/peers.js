// The Node view's peers and reachability: how peers reach this node (its
// reachability, dialable addresses, relays and reservations, the relay
// service, sharing) and the connected peers.

import { $, el, fmtBytes, fmtTime, plural, codeList, learnName, shortPeer } from "./dom.js";

// What each reachability (AutoNAT v2) means for the household's peers.
const REACHABILITY = {
  public: "peers can dial this node",
  private: "behind NAT or a firewall: peers reach it through a relay",
  unknown: "not found out yet",
};

// The peers whose addresses are shown: a refresh keeps them open.
const openPeers = new Set();

// renderReachability shows how peers reach the node: its reachability,
// the addresses confirmed dialable, its relays and reservations, and
// whether it relays for others.
export function renderReachability(st) {
  const r = st.reachability || "unknown";
  const dd = $("reachability");
  dd.dataset.reachability = r;
  dd.replaceChildren(el("strong", {}, r), REACHABILITY[r] ? el("span", { class: "muted" }, " · " + REACHABILITY[r]) : null,
    st.reachabilityBasis ? el("div", { class: "muted", id: "reachability-basis" }, st.reachabilityBasis) : null);
  codeList("reachable-addrs", st.reachableAddrs || [], "none confirmed");
  const relays = st.relays || [];
  $("relays").replaceChildren(...(relays.length === 0 ? [el("li", { class: "muted" }, "none")] : relays.map(relayItem)));
  $("relay-service").textContent = st.relayService ? "on (relays for other peers)" : "off";
  const sh = st.sharing || {};
  const folders = sh.folders || [], priv = sh.private || [];
  const rate = sh.rate > 0 ? ", at most " + fmtBytes(sh.rate) + "/s" : "";
  $("sharing").textContent = (sh.enabled ? "on (other households may fetch this household's files" + rate + ")"
    : folders.length > 0 ? "folders (other households may fetch the files under " + folders.join(", ") + rate + ")"
      : "off (other households cannot fetch this household's files)")
    + (priv.length > 0 ? "; private, never announced, answered for or fetched: " + priv.join(", ") : "");
}

// relayItem is one relay: its ID, the reservation (until when) or none,
// the last error, and the node's circuit addresses through it.
function relayItem(r) {
  const state = el("div", {}, el("span", { class: "badge" + (r.reserved ? " reserved" : "") }, r.reserved ? "reserved" : "not reserved"));
  if (r.reserved && r.expires) state.append(" until ", el("time", { datetime: r.expires, title: r.expires }, fmtTime(r.expires)));
  const circuits = r.addrs || [];
  return el("li", { class: "relay", "data-relay": r.id, "data-reserved": r.reserved ? "true" : "false" },
    el("code", {}, r.id), state,
    r.error ? el("div", { class: "muted error" }, "last error: " + r.error) : null,
    circuits.length === 0 ? null : el("div", { class: "muted" }, plural(circuits.length, "circuit address", "circuit addresses") + ":"),
    circuits.length === 0 ? null : el("ul", { class: "circuits" }, ...circuits.map((a) => el("li", {}, el("code", {}, a)))));
}

// renderPeers lists the connected peers: how each is connected (direct,
// or relayed and through which relay), the transport, the latency and,
// folded, the addresses.
export function renderPeers(peers) {
  $("peers").replaceChildren(...(peers.length === 0 ? [el("li", { class: "muted" }, "no peers connected")] : peers.map(peerItem)));
}

function peerItem(p) {
  learnName(p.id, p.name);
  const conn = p.connection || "unknown";
  const how = el("div", { class: "muted" }, el("span", { class: "badge conn " + conn, title: "connection" }, conn));
  if (p.relay) how.append(" via ", el("code", { class: "relay", title: "relay" }, p.relay));
  if (p.transport) how.append(" · ", el("span", { class: "transport", title: "transport" }, p.transport));
  if (p.latencyMs) how.append(" · " + p.latencyMs.toFixed(1) + " ms");
  const addrs = p.addrs || [];
  return el("li", { class: "peer", "data-peer": p.id, "data-connection": p.connection || "", "data-transport": p.transport || "" },
    shortPeer(p.id), how,
    addrs.length === 0 ? null : el("details", {
      open: openPeers.has(p.id),
      ontoggle: (ev) => { if (ev.target.open) openPeers.add(p.id); else openPeers.delete(p.id); },
    }, el("summary", { class: "muted" }, plural(addrs.length, "address", "addresses")),
    el("ul", {}, ...addrs.map((a) => el("li", {}, el("code", {}, a))))));
}
