package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

var updateWire = flag.Bool("update-wire", false, "rewrite ../api/testdata/*.json from this node's answers")

// TestWire_Golden pins the exact bytes of GET /api/meta and GET
// /api/search for documents a real store and resolver produce: three
// households (one redis-server, go-libp2p's mocknet, deterministic keys
// and digests), where A holds a file with duplicates, a path that is not
// UTF-8, an outside writer's fields and peers' records of it (learned
// members, origin/<peer>/), a file known only from a peer, and a file
// with the odd shapes the open schema allows; B and C answer A's
// federated searches. The answers go out through the api package's
// server, so the bytes are what a client reads. The golden files under
// api/testdata were written by this test from the node as it was before
// /api/meta's answer and search hits had a type of their own (a map
// assembled in store, node and api), so they pin that the JSON did not
// change; -update-wire rewrites them.
func TestWire_Golden(t *testing.T) {
	t.Parallel()
	ctx := waiting.Context(t)
	f := startWireFederation(ctx, t)
	a, b, c := f.a, f.b, f.c

	// A: a local episode at a path that is not UTF-8 (Latin-1 é), two
	// duplicates (one not UTF-8 either), an outside writer's fields.
	f1 := wireHashes(t, "F1")
	a.ingest(ctx, t, "/lib/S\xe9ries/Show.Name.S01E02.Pilot.1080p.mkv", 1234567890, f1, map[string]string{
		"fileType": "video", "mimeType": "video/x-matroska", "videoType": "episode",
		"titles/eng": "Show Name", "season": "1", "episode": "2", "episodes/0": "2", "episodes/1": "3", "episodeTitle": "Pilot",
		"release/resolution": "1080p", "release/group": "GRP", "release/part": "1",
		"fileinfo/duration": "1422.5", "fileinfo/formatName": "matroska,webm",
		"fileinfo/streamdetails/video/0/codec": "h264", "fileinfo/streamdetails/video/0/width": "1920",
		"fileinfo/streamdetails/video/0/height": "1080", "fileinfo/streamdetails/video/0/bitrate": "8000000",
		"fileinfo/streamdetails/audio/0/codec": "aac", "fileinfo/streamdetails/audio/0/channels": "6",
		"fileinfo/streamdetails/audio/0/samplerate": "48000", "fileinfo/streamdetails/audio/0/language": "eng",
		"fileinfo/streamdetails/audio/1/channels": "2", "fileinfo/streamdetails/subtitle/0/language": "fre",
	})
	a.ingest(ctx, t, "/lib/copies/Show.Name.S01E02.mkv", 1234567890, f1, nil)
	a.ingest(ctx, t, "/lib/copies/d\xfcplicate.mkv", 1234567890, f1, nil)
	a.setFields(ctx, t, f1.SHA256, map[string]string{"tmdb/id": "27205", "ratings/imdb": "8.1", "note": "<b>Tom & Jerry</b>"})
	f2 := wireHashes(t, "F2")
	a.ingest(ctx, t, "/lib/Movies/The Name of the Rose (1986)/movie.mkv", 7340032000, f2, map[string]string{
		"fileType": "video", "videoType": "movie", "titles/eng": "The Name of the Rose", "movieYear": "1986", "fileinfo/duration": "7800",
	})
	// A file with the odd shapes outside writers can give a document: a
	// value that is also an object, a list of lists, origin/ fields that
	// are not a peer's, schema-like names, values that do not parse.
	f3 := wireHashes(t, "F3")
	a.ingest(ctx, t, "/lib/odd/show\xff.mkv", 4096, f3, map[string]string{"fileType": "video"})
	a.setFields(ctx, t, f3.SHA256, map[string]string{
		"filePath/x": "beside the path", "origin/foo": "not a peer's", "peers": "not the peers", "learned": "not learned",
		"source": "hidden", "providers": "hidden", "duplicateCount": "hidden",
		"episodes": "3", "episodes/0": "1", "episodes/1": "x",
		"grid/0/0": "a", "grid/0/1": "7", "grid/1/0": "c",
		"fileinfo/streamdetails/video/0/0/width": "640", "fileinfo/streamdetails/video/1/width": " 720 ",
		"fileinfo/duration": " 12.5 ", "movieYear": " 1999 ", "season": "x", "episode": "-1", "release/cd": "2",
		"mtimeish": "1700000000000000000", "title": "",
	})
	f4 := wireHashes(t, "F4")
	a.ingest(ctx, t, "/lib/Games/name.game.mkv", 100, f4, map[string]string{"titles/eng": "Name Game", "fileType": "video"})

	// B and C hold A's episode too, each with members of its own
	// (AddAlias: vouched for), so their records teach A learned members;
	// both hold the special A knows only from B, a trailer, and a file of
	// their own.
	e1, e2 := sha3CID(t, "E1"), sha3CID(t, "E2")
	x, p1 := wireHashes(t, "X"), wireHashes(t, "P1")
	for _, h := range []*wireHousehold{b, c} {
		h.ingest(ctx, t, "/srv/trailer.mkv", 52428800, x, map[string]string{"titles/eng": "Show Name Trailer", "fileType": "video"})
		own := wireHashes(t, "own "+h.name)
		h.ingest(ctx, t, "/srv/own.mkv", 734003200, own, map[string]string{"titles/eng": "Show Name: " + h.name + "'s own", "fileType": "video"})
		h.ingest(ctx, t, "/srv/Show.Name.S01E02.mkv", 1234567890, f1, map[string]string{
			"fileType": "video", "titles/eng": "Show Name", "season": "1", "episode": "2", "episodeTitle": "Pilot " + h.name,
			"fileinfo/duration": "1422.48", "fileinfo/streamdetails/video/0/width": "1280", "release/group": h.name,
		})
		h.ingest(ctx, t, "/srv/special.mkv", 2147483648, p1, map[string]string{
			"titles/eng": "Show Name Special", "fileType": "video", "movieYear": "2004", "fileinfo/duration": "3600.25",
		})
	}
	b.alias(ctx, t, f1.SHA256, e1)
	c.alias(ctx, t, f1.SHA256, e1)
	c.alias(ctx, t, f1.SHA256, e2)
	// A merges their records of the episode (as the resolver does with a
	// fetched record), and B's of the special, which A then knows only
	// from B.
	a.merge(ctx, t, b, f1.IPFS)
	a.merge(ctx, t, c, f1.IPFS)
	a.merge(ctx, t, b, p1.IPFS)

	canon := func(h store.Hashes) string { return protocol.Canonical([]string{h.Midhash, h.SHA256, h.IPFS}) }
	for _, h := range []*wireHousehold{a, b, c} {
		h.waitIndexed(ctx, t, "show name", map[*wireHousehold]int{a: 5, b: 4, c: 4}[h])
	}

	for _, tt := range []struct{ golden, cid string }{
		{"meta_local.json", canon(f1)},
		{"meta_learned.json", e1},
		{"meta_peer.json", canon(p1)},
		{"meta_odd.json", canon(f3)},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			doc, err := a.hh.Lookup(ctx, tt.cid)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.golden, serveWire(t, wireBackend{doc: doc}, "/api/meta/"+tt.cid))
		})
	}
	for _, tt := range []struct {
		golden string
		limit  int
	}{
		{"search_federated.json", 4}, // every peer's hit, shared and seen ones
		{"search_capped.json", 2},    // peers' new hits past the limit dropped
	} {
		t.Run(tt.golden, func(t *testing.T) {
			res, err := a.hh.Search(ctx, "show name", tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.golden, serveWire(t, wireBackend{res: res}, fmt.Sprintf("/api/search?q=show+name&limit=%d&federated=1", tt.limit)))
		})
	}
}

// wireBackend answers what the node computed, through the API server.
type wireBackend struct {
	api.Backend
	doc api.Document
	res api.SearchResult
}

func (w wireBackend) Meta(context.Context, string, bool, api.Caller) (api.Document, error) {
	return w.doc, nil
}

func (w wireBackend) Search(context.Context, string, int, string, bool, api.Caller) (api.SearchResult, error) {
	return w.res, nil
}

// serveWire is the body of the API's 200 answer to GET target.
func serveWire(t *testing.T, b api.Backend, target string) []byte {
	t.Helper()
	req := httptest.NewRequest("GET", "http://127.0.0.1:4680"+target, nil)
	req.RemoteAddr = "127.0.0.1:50000"
	rec := httptest.NewRecorder()
	api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: api.Access{Loopback: true}}).ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// checkGolden compares got with ../api/testdata/name (the wire contract
// lives with the api package), or rewrites it under -update-wire.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("..", "api", "testdata", name)
	if *updateWire {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s: the answer differs from the golden file at line %d:\n got  %q\n want %q\nwhole answer:\n%s", p, i+1, g, w, got)
			}
		}
	}
}

// wireFederation is three households on one redis-server and a mocknet.
type wireFederation struct{ a, b, c *wireHousehold }

type wireHousehold struct {
	name string
	id   peer.ID
	st   *store.Store
	hh   *federation.Household
}

func startWireFederation(ctx context.Context, t *testing.T) wireFederation {
	t.Helper()
	srv := storetest.Server(t)
	mn := mocknet.New()
	t.Cleanup(func() { mn.Close() })
	var hs []*wireHousehold
	for i, name := range []string{"A", "B", "C"} {
		seed := sha256.Sum256([]byte("metamesh wire golden household " + name))
		key, _, err := crypto.GenerateEd25519Key(bytes.NewReader(seed[:]))
		if err != nil {
			t.Fatal(err)
		}
		h, err := mn.AddPeer(key, ma.StringCast(fmt.Sprintf("/ip4/100.64.0.%d/tcp/4681", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(ctx, store.Options{URL: srv.URL() + "?db=" + url.QueryEscape(fmt.Sprint(i)), Logger: storetest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		// No search words on the DHT: B and C are asked as A's connected
		// peers only, so the answer's asked and fromIndex do not depend on
		// which of A's two paths reaches them first.
		hh, err := federation.StartHousehold(ctx, federation.HouseholdConfig{Host: h, Key: key, Store: st,
			ProviderStore: dssync.MutexWrap(datastore.NewMapDatastore()), NoSearchIndex: true, Logger: storetest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hh.Close() })
		hs = append(hs, &wireHousehold{name: name, id: h.ID(), st: st, hh: hh})
	}
	if err := mn.LinkAll(); err != nil {
		t.Fatal(err)
	}
	if err := mn.ConnectAllButSelf(); err != nil {
		t.Fatal(err)
	}
	return wireFederation{hs[0], hs[1], hs[2]}
}

// ingest stores a confirmed local file; roots are minted in call order
// (ties in search rank go by root ID, so by that order).
func (h *wireHousehold) ingest(ctx context.Context, t *testing.T, path string, size int64, hs store.Hashes, fields map[string]string) {
	t.Helper()
	if fields == nil {
		fields = map[string]string{}
	}
	if _, _, err := h.st.Ingest(ctx, store.FileStat{Path: path, Size: size, MtimeNs: 1700000000123456789}, hs,
		store.Meta{Version: 1, Fields: fields}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
}

func (h *wireHousehold) root(ctx context.Context, t *testing.T, c string) store.RootID {
	t.Helper()
	d, err := h.st.DocumentByCID(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return d.Root
}

func (h *wireHousehold) setFields(ctx context.Context, t *testing.T, c string, fields map[string]string) {
	t.Helper()
	if _, err := h.st.SetFields(ctx, h.root(ctx, t, c), fields); err != nil {
		t.Fatal(err)
	}
}

func (h *wireHousehold) alias(ctx context.Context, t *testing.T, c, member string) {
	t.Helper()
	if err := h.st.AddAlias(ctx, h.root(ctx, t, c), member); err != nil {
		t.Fatal(err)
	}
}

// merge takes from's signed record of c (what from answers a record
// request with) into h's store, as the resolver does.
func (h *wireHousehold) merge(ctx context.Context, t *testing.T, from *wireHousehold, c string) {
	t.Helper()
	d, err := from.st.DocumentByCID(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := protocol.NewRecord(d.Vouched(), d.Fields, from.id, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.st.MergeRecord(ctx, from.id.String(), rec.CIDs, rec.Meta)
	if err != nil || res.Conflict {
		t.Fatalf("merge %s's record of %s: %+v %v", from.name, c, res, err)
	}
	time.Sleep(2 * time.Millisecond)
}

// waitIndexed waits until the household's index finds n roots for q.
func (h *wireHousehold) waitIndexed(ctx context.Context, t *testing.T, q string, n int) {
	t.Helper()
	for {
		page, err := h.hh.SearchPage(ctx, q, 100, "", false, nil)
		if err == nil && len(page.Hits) == n {
			// Fields written after the first indexing may still be on
			// their way: one more look after a pause.
			time.Sleep(300 * time.Millisecond)
			if page, err = h.hh.SearchPage(ctx, q, 100, "", false, nil); err == nil && len(page.Hits) == n {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("household %s: %q never found %d roots (%d, %v)", h.name, q, n, len(page.Hits), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wireHashes are fixed digests for a synthetic file named name.
func wireHashes(t *testing.T, name string) store.Hashes {
	t.Helper()
	sum := func(kind string) []byte {
		d := sha256.Sum256([]byte(kind + "/" + name))
		return d[:]
	}
	mid, err := protocol.MidhashCID(sum("mid"))
	if err != nil {
		t.Fatal(err)
	}
	sha, err := protocol.SHA256CID(sum("sha"))
	if err != nil {
		t.Fatal(err)
	}
	mh, err := multihash.Encode(sum("ipfs"), multihash.SHA2_256)
	if err != nil {
		t.Fatal(err)
	}
	return store.Hashes{Midhash: mid.String(), SHA256: sha.String(), IPFS: cid.NewCidV1(cid.DagProtobuf, mh).String()}
}

// sha3CID is a fixed sha3-256 CID: a member a household adds to a file.
func sha3CID(t *testing.T, name string) string {
	t.Helper()
	d := sha256.Sum256([]byte("sha3/" + name))
	mh, err := multihash.Encode(d[:], multihash.SHA3_256)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, mh).String()
}
