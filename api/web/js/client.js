// The page's client of the node's HTTP API: the API token (asked for when
// the node wants it, kept for the browser's session) and the fetches.

import { $ } from "./dom.js";

const TOKEN_KEY = "metamesh.token";
let token = sessionStorage.getItem(TOKEN_KEY) || "";
let tokenWaiters = null; // pending askToken promise callbacks

// hasToken reports whether the page sends a token: then the node's files
// cannot be plain links (an <img>, a <video> or EventSource sends none).
export function hasToken() { return token !== ""; }

// askToken shows the token form once and resolves when it is submitted;
// concurrent callers share the same prompt.
function askToken(why) {
  if (tokenWaiters) return tokenWaiters.promise;
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  tokenWaiters = { promise, resolve };
  $("token-why").textContent = why;
  $("token-section").hidden = false;
  $("token").focus();
  return promise;
}

// bindTokenForm keeps the token the form is given, for the session, and
// lets the requests that waited for it go on.
export function bindTokenForm() {
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    $("token-section").hidden = true;
    const w = tokenWaiters;
    tokenWaiters = null;
    if (w) w.resolve();
  });
}

// api fetches a JSON endpoint; a 401 asks for the token and retries
// (unless opts.ask is false: then it is an error with its status, as
// others are). opts.method and opts.body (sent as JSON) make it a write.
export async function api(path, opts) {
  const ask = !opts || opts.ask !== false;
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const init = { headers, method: (opts && opts.method) || "GET" };
    if (opts && opts.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(opts.body);
    }
    const resp = await fetch(path, init);
    if (resp.status === 401 && ask && attempt < 3) {
      await askToken(token ? "That token was refused; enter the node's API token." : await refusal(resp));
      continue;
    }
    let body = null;
    try { body = await resp.json(); } catch (e) { body = null; }
    if (!resp.ok) {
      const err = new Error((body && body.error) || resp.status + " " + resp.statusText);
      err.status = resp.status;
      throw err;
    }
    return body;
  }
}

// refusal is what a 401 without a token says: the node's own words (a
// browser whose invite was revoked is told to ask for a new one), else
// that the node wants its token.
async function refusal(resp) {
  try {
    const body = await resp.json();
    if (body && body.error) return body.error;
  } catch (e) { /* not JSON: the default */ }
  return "This node needs its API token (the file --api-token-file names), or an invite (metamesh invite).";
}

// authHeaders are the headers a fetch of the node's sends its token in
// (none without one).
export function authHeaders() { return token ? { Authorization: "Bearer " + token } : {}; }

// fetchBlob fetches a file with the token and returns a URL of its bytes
// in the browser.
export async function fetchBlob(href) {
  const resp = await fetch(href, { headers: { Authorization: "Bearer " + token } });
  if (!resp.ok) throw new Error(resp.status + " " + resp.statusText);
  return URL.createObjectURL(await resp.blob());
}

// setEvery sets the same fields on every file of cids, 1,000 a POST
// /api/meta/batch (the batch's cap); it answers how many were not
// changed.
export async function setEvery(cids, set) {
  let failed = 0;
  for (let i = 0; i < cids.length; i += 1000) {
    const ans = await api("/api/meta/batch", { method: "POST", body: cids.slice(i, i + 1000).map((cid) => ({ cid, set })) });
    failed += ans.items.filter((it) => it.status !== 200).length;
  }
  return failed;
}
