// MetaMesh web page: plain JavaScript modules against the node's HTTP
// API, no build step. Text from the API is only ever set with
// textContent, never as HTML.
//
// This module starts the page and routes: it shows what the URL says
// (nav.js) with the view of each part.

import { $ } from "./dom.js";
import { bindTokenForm } from "./client.js";
import { state, startNav, go, follow } from "./nav.js";
import { showSearch, hideSearch, bindSearch } from "./search.js";
import { showList, forgetList, renderViews } from "./library.js";
import { showRecord, closeRecord, bindEdit } from "./record.js";
import { showDuplicates, forgetDuplicates } from "./duplicates.js";
import { unavailableWords } from "./sources.js";
import { refreshNode, renderStatus } from "./status.js";
import { renderPeers } from "./peers.js";
import { startUpdates } from "./events.js";
import { bindMembers, showContinue, markCards } from "./members.js";
import { showHouseholds, hideHouseholds, showHouseholdLibrary, leaveHouseholdLibrary, bindHouseholdSearch } from "./households.js";

// render shows state s: the search, a list of the library, the
// Duplicates view or the Node view, and over them the open record; each
// loads only what changed.
function render(s) {
  if (document.activeElement !== $("q")) $("q").value = s.q;
  $("federated").checked = s.federated;
  const searching = s.q !== "";
  // A record is a page of its own, at the top: the list or the search it
  // was opened from comes back when it is closed.
  const recordOpen = s.cid !== "";
  const nodeView = !searching && s.view === "node";
  const dupesView = !searching && s.view === "duplicates";
  $("library").hidden = searching || recordOpen;
  $("library").classList.toggle("node-view", nodeView || dupesView);
  $("node").hidden = !nodeView || recordOpen;
  $("dupes").hidden = !dupesView || recordOpen;
  $("results").hidden = recordOpen;
  $("search-status").hidden = recordOpen;
  $("search-back").hidden = !searching;
  if (searching) {
    forgetList(); // files may come and go meanwhile: back, it loads again
    showSearch(s.q, s.federated);
  } else {
    hideSearch();
  }
  if (dupesView) showDuplicates(s);
  else forgetDuplicates(); // files may come and go meanwhile: back, they load again
  const householdView = !searching && s.view === "household";
  if (!searching && s.view === "peers") showHouseholds();
  else hideHouseholds();
  if (householdView) {
    forgetList(); // back on a list of this household's, it loads again
    renderViews(s);
    showHouseholdLibrary(s);
  } else {
    leaveHouseholdLibrary();
  }
  if (nodeView || dupesView) renderViews(s);
  else if (!searching && !householdView) showList(s);
  if (s.cid) showRecord(s.cid);
  else closeRecord();
  if (!searching && !recordOpen) showContinue(s);
  markCards();
}

// bindViews makes the views' tabs, "Back to the library" and the
// record's Close work in the page.
function bindViews() {
  for (const a of $("views").querySelectorAll("a[data-view]")) {
    a.addEventListener("click", (ev) => follow(ev, { view: a.dataset.view }));
  }
  $("back-to-library").addEventListener("click", (ev) => {
    ev.preventDefault();
    go({});
  });
  $("close-record").addEventListener("click", (ev) => {
    ev.preventDefault();
    go({ ...state, cid: "" });
  });
}

async function init() {
  startNav(render);
  bindMembers(() => { render(state); });
  let st = null;
  try {
    st = await refreshNode();
  } catch (e) {
    $("summary").textContent = "The node did not answer: " + e.message;
  }
  startUpdates(st);
}

bindTokenForm();
bindSearch();
bindEdit();
bindViews();
bindHouseholdSearch();
// The page's browser tests (node/web*_test.go) call these by name, as
// they could when the page was one classic script: the renderers, fed
// what loopback nodes cannot be; the words of /api/sources answers; go.
Object.assign(window, { go, renderStatus, renderPeers, unavailableWords });
init();
