package node_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// A file only a peer has plays and downloads through GET /api/file when
// its household shares: the whole file, a range in its middle (only the
// blocks the range covers are fetched), and /api/sources says where the
// bytes come from. A household that does not share answers DONT_HAVE,
// and the fetching household says so.
func TestAPI_PeerFile(t *testing.T) {
	t.Parallel()
	data := make([]byte, 3<<20+12345) // 13 leaves, the last one short
	rand.Read(data)
	small := make([]byte, 100<<10) // one leaf: its IPFS CID is its sha2-256
	rand.Read(small)

	lib := t.TempDir()
	writeOld(t, filepath.Join(lib, "Film (2001).mkv"), data)
	writeOld(t, filepath.Join(lib, "Short (2002).mkv"), small)
	sharing := startNodeWith(t, lib, func(c *node.Config) { c.ShareFiles = true })
	quiet := t.TempDir()
	writeOld(t, filepath.Join(quiet, "Quiet (2003).mkv"), data[:1<<20])
	notSharing := startNodeWith(t, quiet, nil)
	b := p2pNode(t, nil)
	for _, n := range []*node.Node{sharing, notSharing} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}

	film := canonicalOf(t, filepath.Join(lib, "Film (2001).mkv"))
	short := canonicalOf(t, filepath.Join(lib, "Short (2002).mkv"))
	for _, tc := range []struct {
		cid  string
		want []byte
	}{{film, data}, {short, small}} {
		var doc api.Document
		getJSON(t, b, "/api/meta/"+tc.cid, &doc) // the record, from the peer
		resp, body := do(t, b, "GET", "/api/file/"+tc.cid, nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, tc.want) {
			t.Fatalf("GET /api/file of a peer's file: %s, %d bytes (want %d): %.200s", resp.Status, len(body), len(tc.want), body)
		}
		if got := resp.Header.Get("ETag"); got != `"`+tc.cid+`"` {
			t.Errorf("ETag %s, want the canonical CID", got)
		}
	}

	// A range in the middle, across a leaf boundary.
	from, to := 1<<20-100, 2<<20+99
	resp, body := do(t, b, "GET", "/api/file/"+film, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, to)})
	if resp.StatusCode != 206 || !bytes.Equal(body, data[from:to+1]) {
		t.Fatalf("Range: %s, %d bytes", resp.Status, len(body))
	}
	if got, want := resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", from, to, len(data)); got != want {
		t.Errorf("Content-Range %q, want %q", got, want)
	}

	_, metrics := do(t, sharing, "GET", "/metrics", nil)
	m := regexp.MustCompile(`(?m)^metamesh_share_served_bytes_total (\S+)`).FindSubmatch(metrics)
	if served, _ := strconv.ParseFloat(string(append(m, nil, nil)[1]), 64); served < float64(len(data)+len(small)) {
		t.Errorf("the sharing household's metrics do not count the megabytes it served:\n%s", regexp.MustCompile(`(?m)^metamesh_share.*$`).FindAll(metrics, -1))
	}
	var src api.Sources
	getJSON(t, b, "/api/sources/"+film, &src)
	if !src.Available || src.Local || src.Size != int64(len(data)) || len(src.Providers) == 0 || src.Providers[0].State != "shares" {
		t.Errorf("sources of a shared file: %+v", src)
	}
	getJSON(t, sharing, "/api/sources/"+film, &src)
	if !src.Available || !src.Local {
		t.Errorf("sources of a local file: %+v", src)
	}

	// The household that does not share.
	quietCID := canonicalOf(t, filepath.Join(quiet, "Quiet (2003).mkv"))
	var doc api.Document
	getJSON(t, b, "/api/meta/"+quietCID, &doc)
	resp, body = do(t, b, "GET", "/api/file/"+quietCID, nil)
	var e struct {
		Error     string
		Providers []api.Source
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != 503 || len(e.Providers) != 1 || e.Providers[0].State != "does not share" || e.Providers[0].Peer != notSharing.PeerID() {
		t.Fatalf("a file of a household that does not share: %s %s", resp.Status, body)
	}
	getJSON(t, b, "/api/sources/"+quietCID, &src)
	if src.Available || src.Reason == "" {
		t.Errorf("sources of an unshared file: %+v", src)
	}
}

// A household reached only through a relay cannot send a file (relay v2
// carries too little, and bitswap does not use relayed connections): the
// fetching household says so, naming the provider "relayed", instead of
// waiting on it.
func TestAPI_PeerFileOnlyThroughARelay(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	data := make([]byte, 600<<10)
	rand.Read(data)
	writeOld(t, filepath.Join(lib, "North.Wind.2018.mkv"), data)
	_, b, c := relayedTrio(t, lib, nil, func(c *node.Config) { c.ShareFiles = true }, nil)
	var peers struct {
		Peers []api.Peer `json:"peers"`
	}
	waiting.For(t, "C connected to B through R", func() bool {
		getJSON(t, c, "/api/peers", &peers)
		return slices.ContainsFunc(peers.Peers, func(p api.Peer) bool { return p.ID == b.PeerID() && p.Connection == "relayed" })
	})
	film := canonicalOf(t, filepath.Join(lib, "North.Wind.2018.mkv"))
	var doc api.Document
	getJSON(t, c, "/api/meta/"+film, &doc)
	resp, body := do(t, c, "GET", "/api/file/"+film, nil)
	var e struct {
		Error     string
		Providers []api.Source
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != 503 || !slices.Contains(e.Providers, api.Source{Peer: b.PeerID(), State: "relayed"}) || !strings.Contains(e.Error, "relay") {
		t.Fatalf("a file of a household reached only through a relay: %s %s", resp.Status, body)
	}
}
