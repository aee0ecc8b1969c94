package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/privacy"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/protocol"
)

// hashesOf are the CIDs of the file at p.
func hashesOf(t *testing.T, p string) ingest.FileHashes {
	t.Helper()
	h, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// providersAt are the providers B's DHT names for c, the query run to
// its end.
func providersAt(t *testing.T, b *node.Node, c string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, _ := b.FindProviders(ctx, c, 0)
	return ps
}

// searchAt is B's federated search for q: the titles of its hits.
func searchAt(t *testing.T, b *node.Node, q string, federated bool) []string {
	t.Helper()
	var res api.SearchResult
	path := "/api/search?q=" + q
	if federated {
		path += "&federated=1"
	}
	getJSON(t, b, path, &res)
	var titles []string
	for _, h := range res.Hits {
		titles = append(titles, h.Title)
	}
	return titles
}

// Two households on loopback: A shares one folder (--share-files=DIR),
// has a file outside it and a folder with a .metamesh-private. B finds,
// looks up and fetches the shared file; it looks up the file outside
// the shared folders but cannot fetch it; of the private file it finds
// nothing: no provider record and no search word on the DHT, no record,
// no search hit. A marker added later makes a folder private at once,
// and removed, public again.
func TestSharing_PrivateFolder(t *testing.T) {
	t.Parallel()
	lib, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := func(rel string, n int) ingest.FileHashes {
		data := make([]byte, n)
		rand.Read(data)
		writeOld(t, filepath.Join(lib, rel), data)
		return hashesOf(t, filepath.Join(lib, rel))
	}
	shared := file("Shared/Bright.Meadow.2011.mkv", 600<<10)
	other := file("Other/Calm.River.2012.mkv", 300<<10)
	writeOld(t, filepath.Join(lib, "Home", privacy.PrivateMarker), nil)
	// A share marker inside a private folder shares nothing.
	writeOld(t, filepath.Join(lib, "Home/Kids", privacy.ShareMarker), nil)
	secret := file("Home/Secret.Garden.2013.mkv", 300<<10)
	kids := file("Home/Kids/Hidden.Valley.2015.mkv", 200<<10)
	later := file("Later/Quiet.Hill.2014.mkv", 200<<10)
	moving := file("Other/Wide.Lake.2016.mkv", 100<<10)

	a := startNodeWith(t, lib, func(c *node.Config) { c.ShareFolders = []string{filepath.Join(lib, "Shared")} })
	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}

	// What A announces: the three public files' CIDs, never the private
	// ones'.
	waiting.Until(t, "A to announce its public files only", func() string {
		if st := a.ProvideStats(); st.CIDKeys != 4 || st.Announced != 4 {
			return fmt.Sprintf("announced %d roots, %d CID keys; want 4 (Shared, Other twice, Later)", st.Announced, st.CIDKeys)
		}
		return ""
	})
	// B's DHT names A for a public file's CID and one of its words
	// (the provides went out) ...
	waiting.Until(t, "B's DHT to name A for the shared file and its word", func() string {
		if !slices.Contains(providersAt(t, b, shared.Canonical), a.PeerID()) {
			return "no provider of the shared file's CID"
		}
		if !slices.Contains(providersAt(t, b, protocol.SearchTokenKey("meadow").String()), a.PeerID()) {
			return "no provider of the word meadow"
		}
		return ""
	})
	// ... and never for a private file's CID or words.
	for _, c := range []string{secret.Canonical, secret.IPFS, secret.SHA256, kids.Canonical,
		protocol.SearchTokenKey("garden").String(), protocol.SearchTokenKey("secret").String(), protocol.SearchTokenKey("valley").String()} {
		if ps := providersAt(t, b, c); slices.Contains(ps, a.PeerID()) {
			t.Errorf("B's DHT names A as a provider of %s, a private file's CID or word", c)
		}
	}

	// Search: B finds the shared file, never the private ones; A's own
	// search still lists them.
	if !answeredBy(t, b, "meadow", a) {
		t.Errorf("B's federated search for meadow: A's answer holds no hit, want Bright Meadow")
	}
	for _, q := range []string{"garden", "valley"} {
		if got := searchAt(t, b, q, true); len(got) != 0 {
			t.Errorf("B's federated search for %s: %v, want nothing", q, got)
		}
		if got := searchAt(t, a, q, false); len(got) != 1 {
			t.Errorf("A's own search for %s: %v, want its file", q, got)
		}
	}

	// Records: the public files' at once, no private file's by any CID.
	for _, h := range []ingest.FileHashes{shared, other} {
		var doc api.Document
		getJSON(t, b, "/api/meta/"+h.Canonical, &doc)
	}
	for _, h := range []ingest.FileHashes{secret, kids} {
		for _, c := range []string{h.Canonical, h.IPFS, h.SHA256, h.Midhash} {
			if resp, body := do(t, b, "GET", "/api/meta/"+c, nil); resp.StatusCode != 404 {
				t.Errorf("B's GET /api/meta of a private file's %s: %s %.300s, want 404", c, resp.Status, body)
			}
		}
	}

	// Bytes: the shared folder's file comes over bitswap; the file
	// outside it does not.
	resp, body := do(t, b, "GET", "/api/file/"+shared.Canonical, nil)
	if want, _ := os.ReadFile(filepath.Join(lib, "Shared/Bright.Meadow.2011.mkv")); resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("B's GET /api/file of the shared file: %s, %d bytes (want %d)", resp.Status, len(body), len(want))
	}
	if resp, body := do(t, b, "GET", "/api/file/"+other.Canonical, nil); resp.StatusCode != 503 {
		t.Errorf("B's GET /api/file of a file outside the shared folders: %s %.300s, want 503", resp.Status, body)
	}

	// A's status says which folders are shared and which private.
	var st api.Status
	getJSON(t, a, "/api/status", &st)
	if want := []string{filepath.Join(lib, "Shared")}; st.Sharing.Enabled || !slices.Equal(st.Sharing.Folders, want) {
		t.Errorf("status sharing %+v, want folders %v", st.Sharing, want)
	}
	if want := []string{filepath.Join(lib, "Home")}; !slices.Equal(st.Sharing.Private, want) {
		t.Errorf("status sharing private %v, want %v", st.Sharing.Private, want)
	}

	// A marker added: the folder's file is no longer announced, and B
	// gets no record of it.
	marker := filepath.Join(lib, "Later", privacy.PrivateMarker)
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "A to stop announcing the file of the folder made private", func() string {
		if st := a.ProvideStats(); st.CIDKeys != 3 {
			return fmt.Sprintf("%d CID keys, want 3", st.CIDKeys)
		}
		return ""
	})
	if resp, body := do(t, b, "GET", "/api/meta/"+later.Canonical, nil); resp.StatusCode != 404 {
		t.Errorf("B's GET /api/meta of a file made private: %s %.300s, want 404", resp.Status, body)
	}
	if got := searchAt(t, b, "hill", true); len(got) != 0 {
		t.Errorf("B's federated search for a file made private: %v, want nothing", got)
	}
	// Removed: announced and answered for again.
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "A to announce the file again", func() string {
		if st := a.ProvideStats(); st.CIDKeys != 4 {
			return fmt.Sprintf("%d CID keys, want 4", st.CIDKeys)
		}
		return ""
	})
	waiting.Until(t, "B to get the record of the file public again", func() string {
		if resp, body := do(t, b, "GET", "/api/meta/"+later.Canonical, nil); resp.StatusCode != 200 {
			return fmt.Sprintf("%s %.200s", resp.Status, body)
		}
		return ""
	})

	// A file moved into a private folder is judged where it lands: no
	// longer announced, answered for or found (B never asked for it
	// before, so it holds nothing of it).
	if err := os.Rename(filepath.Join(lib, "Other/Wide.Lake.2016.mkv"), filepath.Join(lib, "Home/Wide.Lake.2016.mkv")); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "A to stop announcing the file moved into the private folder", func() string {
		if st := a.ProvideStats(); st.CIDKeys != 3 {
			return fmt.Sprintf("%d CID keys, want 3", st.CIDKeys)
		}
		return ""
	})
	if answeredBy(t, b, "lake", a) {
		t.Errorf("A answered B's search with the file moved into the private folder")
	}
	if resp, body := do(t, b, "GET", "/api/meta/"+moving.Canonical, nil); resp.StatusCode != 404 {
		t.Errorf("B's GET /api/meta of the file moved into the private folder: %s %.300s, want 404", resp.Status, body)
	}
}

// answeredBy reports whether a's answer to b's federated search for q
// held a hit.
func answeredBy(t *testing.T, b *node.Node, q string, a *node.Node) bool {
	t.Helper()
	var res api.SearchResult
	getJSON(t, b, "/api/search?q="+q+"&federated=1", &res)
	for _, h := range res.Hits {
		if slices.Contains(h.Peers, a.PeerID()) {
			return true
		}
	}
	return false
}

// A shared folder outside every library is refused at start, naming the
// flag.
func TestSharing_FolderOutsideLibraries(t *testing.T) {
	t.Parallel()
	lib, outside := t.TempDir(), t.TempDir()
	_, err := node.New(node.Config{Libraries: []string{lib}, DataDir: t.TempDir(), APIAddr: "127.0.0.1:0", ShareFolders: []string{outside}})
	if !errors.Is(err, privacy.ErrNotInLibrary) || !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "--share-files") {
		t.Errorf("a shared folder outside the libraries: %v, want ErrNotInLibrary naming --share-files", err)
	}
}

// With --share-files (every file), a private folder's file is still
// refused over bitswap, asked directly by its IPFS CID; and a file
// being served stops being served once a marker makes its folder
// private (the file held open is closed and judged again).
func TestSharing_PrivateWinsOverShareFiles(t *testing.T) {
	t.Parallel()
	lib, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := func(rel string) cid.Cid {
		data := make([]byte, 600<<10)
		rand.Read(data)
		writeOld(t, filepath.Join(lib, rel), data)
		c, err := cid.Decode(hashesOf(t, filepath.Join(lib, rel)).IPFS)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	open := file("Films/Open.Door.2010.mkv")
	writeOld(t, filepath.Join(lib, "Home", privacy.PrivateMarker), nil)
	closed := file("Home/Closed.Door.2011.mkv")
	a, logs := startNodeLogged(t, lib, func(c *node.Config) { c.ShareFiles = true })
	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	aID, err := peer.Decode(a.PeerID())
	if err != nil {
		t.Fatal(err)
	}
	probe := func(root cid.Cid) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		f, err := b.Share().Probe(ctx, root, []peer.ID{aID})
		if err == nil {
			f.Close()
		}
		return err
	}
	if err := probe(open); err != nil {
		t.Fatalf("B's fetch of a shared file's root: %v", err)
	}
	var u *share.UnavailableError
	if err := probe(closed); !errors.As(err, &u) {
		t.Errorf("B's fetch of a private file's root: %v, want every provider refusing", err)
	}

	// The shared file is open at A (it just served its root); a marker
	// makes its folder private.
	if err := os.WriteFile(filepath.Join(lib, "Films", privacy.PrivateMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "A to see the marker", func() string {
		if !strings.Contains(logs.String(), "sharing marker changed") {
			return "no marker change in A's log"
		}
		return ""
	})
	if err := probe(open); !errors.As(err, &u) {
		t.Errorf("B's fetch of a file whose folder was made private: %v, want every provider refusing", err)
	}
}
