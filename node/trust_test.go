package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// sha256CIDOf is the raw sha2-256 CID ("bafkrei…") of n's local file
// whose canonical CID is canonical.
func sha256CIDOf(t *testing.T, n *node.Node, canonical string) string {
	t.Helper()
	var doc api.Document
	getJSON(t, n, "/api/meta/"+canonical, &doc)
	for _, c := range doc.CIDs {
		if strings.HasPrefix(c, "bafkrei") && c != canonical {
			return c
		}
	}
	t.Fatalf("%s has no sha2-256 CID beside its canonical one: %v", canonical, doc.CIDs)
	return ""
}

// disproved reads n's metamesh_peer_records_disproved_total.
func disproved(t *testing.T, n *node.Node) string {
	t.Helper()
	_, metrics := do(t, n, "GET", "/metrics", nil)
	m := regexp.MustCompile(`(?m)^metamesh_peer_records_disproved_total (\S+)`).FindSubmatch(metrics)
	if m == nil {
		t.Fatal("/metrics has no metamesh_peer_records_disproved_total")
	}
	return string(m[1])
}

// A hostile household pairs the sha2-256 CID X of another household's
// film with the IPFS CID Y of its own bytes, and answers every record
// request at once. Asked for X, a household never serves Y's bytes: its
// fetch checks them against X before the first byte goes out, drops the
// record and stops believing its signer; with no other household that
// has the film it answers 404, and once the film's household is
// connected, the film.
func TestTrust_PairingAttack(t *testing.T) {
	t.Parallel()
	film := make([]byte, 3<<20+1) // 13 leaves: a dag-pb IPFS CID
	rand.Read(film)
	evil := make([]byte, 600000)
	rand.Read(evil)
	libA, libH := t.TempDir(), t.TempDir()
	writeOld(t, filepath.Join(libA, "Second.Film.2021.mkv"), film)
	writeOld(t, filepath.Join(libH, "evil.bin"), evil)
	share := func(c *node.Config) { c.ShareFiles = true }
	a := startNodeWith(t, libA, share)
	h := startNodeWith(t, libH, share)
	b := p2pNode(t, nil)

	x := sha256CIDOf(t, a, canonicalOf(t, filepath.Join(libA, "Second.Film.2021.mkv")))
	y := canonicalOf(t, filepath.Join(libH, "evil.bin"))
	h.ForgeRecords(y, map[string]string{"title": "Forged <img src=x onerror=alert(1)>"})

	// Forced order: only the hostile household is connected, so its
	// record is the one merged.
	if err := connect(b, h); err != nil {
		t.Fatal(err)
	}
	var doc api.Document
	getJSON(t, b, "/api/meta/"+x, &doc)
	if doc.Source != h.PeerID() || !slices.Contains(doc.CIDs, y) {
		t.Fatalf("the forged record was not merged (the case is not set up): source %s, cids %v", doc.Source, doc.CIDs)
	}
	resp, body := do(t, b, "GET", "/api/file/"+x, nil)
	if bytes.Contains(body, evil[:4096]) || resp.StatusCode != 404 {
		t.Fatalf("GET /api/file/X with only the hostile household's record: %s, %d bytes (want 404 and never its bytes): %.300s", resp.Status, len(body), body)
	}
	if cc := resp.Header.Get("Cache-Control"); strings.Contains(cc, "immutable") {
		t.Errorf("an error is labelled immutable: %q", cc)
	}
	if got := disproved(t, b); got != "1" {
		t.Errorf("metamesh_peer_records_disproved_total %s, want 1", got)
	}
	if resp, body := do(t, b, "GET", "/api/meta/"+x, nil); resp.StatusCode != 404 {
		t.Errorf("GET /api/meta/X after the record was disproved: %s %.300s (want 404: the record is gone, its signer not believed)", resp.Status, body)
	}

	// The film's household comes: X is the film, whole, and the hostile
	// household is not asked again.
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "GET /api/file/X to serve the film", func() bool {
		resp, body := do(t, b, "GET", "/api/file/"+x, nil)
		if bytes.Contains(body, evil[:4096]) {
			t.Fatalf("the hostile household's bytes were served under X: %s", resp.Status)
		}
		return resp.StatusCode == 200 && bytes.Equal(body, film)
	})
	getJSON(t, b, "/api/meta/"+x, &doc)
	if doc.Source != a.PeerID() || slices.Contains(doc.CIDs, y) {
		t.Errorf("GET /api/meta/X: source %s, cids %v; want the film's household and not the hostile CID", doc.Source, doc.CIDs)
	}
	if _, body := do(t, b, "GET", "/api/meta/"+x, nil); bytes.Contains(body, []byte("Forged")) {
		t.Errorf("the forged title is still shown: %.400s", body)
	}
	// A range of X streams at once now: the pairing was checked.
	resp, body = do(t, b, "GET", "/api/file/"+x, map[string]string{"Range": "bytes=1048476-2097251"})
	if resp.StatusCode != 206 || !bytes.Equal(body, film[1048476:2097252]) {
		t.Errorf("a range of X after the check: %s, %d bytes", resp.Status, len(body))
	}
	if got := disproved(t, b); got != "1" {
		t.Errorf("metamesh_peer_records_disproved_total %s, want still 1", got)
	}
}

// A record from the household the DHT names as holding a file outranks
// a connected peer's that answers first: a hostile household that
// answers every record request at once with a forged title does not
// replace the holder's title.
func TestTrust_HolderOutranksFastestAnswer(t *testing.T) {
	t.Parallel()
	film := make([]byte, 1<<20+7)
	rand.Read(film)
	libA := t.TempDir()
	writeOld(t, filepath.Join(libA, "Quiet.Harbour.2019.mkv"), film)
	a := startNodeWith(t, libA, nil)
	h := p2pNode(t, nil)
	b := p2pNode(t, nil)
	z := canonicalOf(t, filepath.Join(libA, "Quiet.Harbour.2019.mkv"))
	h.ForgeRecords("", map[string]string{"title": "Forged Title"})
	for _, pair := range [][2]*node.Node{{b, h}, {b, a}, {a, h}} {
		if err := connect(pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}
	waiting.For(t, "B's DHT to name the film's household as a provider", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, _ := b.FindProviders(ctx, z, 1)
		return slices.Contains(ps, a.PeerID())
	})
	resp, body := do(t, b, "GET", "/api/meta/"+z, nil)
	if resp.StatusCode != 200 || bytes.Contains(body, []byte("Forged")) {
		t.Fatalf("GET /api/meta of the holder's file: %s %.400s; want the holder's record, not the forged title", resp.Status, body)
	}
	var doc api.Document
	getJSON(t, b, "/api/meta/"+z, &doc)
	if doc.Source != a.PeerID() {
		t.Errorf("source %s, want the holder %s (the hostile one is %s)", doc.Source, a.PeerID(), h.PeerID())
	}
}
