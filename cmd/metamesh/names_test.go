package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// peerCellRE matches how peers, search and lookup show the peer id: the
// name its household claims (the host name by default: whatever the
// machine is called) and the end of its ID, or its abbreviated ID when
// the node heard no name.
func peerCellRE(id string) string {
	return `(?:` + regexp.QuoteMeta(shortID(id)) + `|\S.* \(…` + regexp.QuoteMeta(id[len(id)-6:]) + `\))`
}

// TestClient_PeerNames: search and lookup show a peer by the name its
// household claims and the end of its peer ID (two households that claim
// one name stay apart), a peer that sent none by its abbreviated ID, and
// --json keeps the whole IDs. A name is printed through the escaper: one
// the node passed on with a control character cannot reach the terminal.
func TestClient_PeerNames(t *testing.T) {
	alice, twin, bare := testPeerID(t), testPeerID(t), testPeerID(t)
	end := func(id string) string { return id[len(id)-6:] }
	search := `{"hits":[
	  {"cid":"bafkreiaaaa","cids":["bafkreiaaaa"],"fileType":"video","size":1,"source":"local","title":"Film Mine"},
	  {"cid":"bafkreibbbb","cids":["bafkreibbbb"],"fileType":"video","size":1,"source":"` + alice + `","title":"Film Alice"},
	  {"cid":"bafkreicccc","cids":["bafkreicccc"],"fileType":"video","size":1,"source":"` + twin + `","title":"Film Twin"},
	  {"cid":"bafkreidddd","cids":["bafkreidddd"],"fileType":"video","size":1,"source":"` + bare + `","title":"Film Bare"}],
	 "peers":["` + alice + `","` + twin + `","` + bare + `"],"asked":3,"fromIndex":0,
	 "peerNames":{"` + alice + `":"Alice's NAS","` + twin + `":"Alice's NAS\u001b[2J"}}`
	meta := `{"cids":["bafkreibbbb"],"canonical_cid":"bafkreibbbb","duplicates":[],"duplicateCount":0,
	 "source":"` + alice + `","providers":["` + alice + `","` + bare + `"],"peers":["` + alice + `"],
	 "peerNames":{"` + alice + `":"Alice's NAS"},"title":"Film Alice"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/search") {
			w.Write([]byte(search))
			return
		}
		w.Write([]byte(meta))
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name      string
		args      []string
		want      []string
		wantNever []string
	}{
		{"search", []string{"search", "film", "--federated"},
			[]string{"Alice's NAS (…" + end(alice) + ")", `Alice's NAS\x1b[2J (…` + end(twin) + ")", bare[:8] + "…" + end(bare), "local"},
			[]string{alice, twin, bare, "\x1b"}},
		{"search --json", []string{"search", "film", "--federated", "--json"},
			[]string{alice, twin, bare, `"Alice's NAS"`}, nil},
		{"lookup", []string{"lookup", "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"},
			[]string{"source    peer Alice's NAS (…" + end(alice) + ")", "provider  Alice's NAS (…" + end(alice) + ")", "provider  " + bare[:8] + "…" + end(bare)},
			[]string{alice, bare}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append(tc.args, "--api", srv.URL)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNever {
				if strings.Contains(out, w) {
					t.Errorf("output holds %q:\n%s", w, out)
				}
			}
		})
	}
}
