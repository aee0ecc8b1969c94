package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// The fixture of layout 1 (testdata/v1): a store written by the release
// before layout versions existed, as a command log (store.cmds), and what
// its public reads returned then (reads.json). It was written by
// TestWriteFixtureV1 at that release; the upgrade tests replay it and
// compare every read.

// fixtureReads is everything a store answers through its public reads,
// in a comparable form.
type fixtureReads struct {
	Roots     map[store.RootID]fixtureDoc   `json:"roots"`
	Aliases   map[string]store.RootID       `json:"aliases"`
	Paths     map[string]store.PathState    `json:"paths"`
	Inodes    map[string][]string           `json:"inodes"`
	Own       map[store.RootID]store.Hashes `json:"own"`
	Announced map[store.RootID]string       `json:"announced"`
	// Feed maps a consumer position to the events after it.
	Feed   map[string][]store.Event     `json:"feed"`
	Search map[string][]store.SearchHit `json:"search"`
}

type fixtureDoc struct {
	Fields         map[string]string   `json:"fields"`
	CIDs           []string            `json:"cids"`
	Duplicates     []string            `json:"duplicates"`
	DuplicateCount int64               `json:"duplicateCount"`
	Peers          []string            `json:"peers"`
	Learned        map[string][]string `json:"learned"`
	Canonical      string              `json:"canonical"`
	Vouched        []string            `json:"vouched"`
}

// fixtureQueries are the searches the fixture's reads record.
var fixtureQueries = []string{"inception", "dark", "matrix", "2010", "s01e02", "film", "peer"}

// readAll reads everything the fixture compares.
func readAll(tb testing.TB, s *store.Store) fixtureReads {
	tb.Helper()
	out := fixtureReads{Roots: map[store.RootID]fixtureDoc{}, Aliases: map[string]store.RootID{}, Paths: map[string]store.PathState{},
		Inodes: map[string][]string{}, Own: map[store.RootID]store.Hashes{}, Announced: map[store.RootID]string{},
		Feed: map[string][]store.Event{}, Search: map[string][]store.SearchHit{}}
	roots := must[[]store.RootID](tb)(s.RootIDs(ctx))
	for _, r := range roots {
		d := must[store.Document](tb)(s.Document(ctx, r))
		out.Roots[r] = fixtureDoc{Fields: d.Fields, CIDs: d.CIDs, Duplicates: d.Duplicates, DuplicateCount: d.DuplicateCount,
			Peers: d.Peers, Learned: d.Learned, Canonical: d.CanonicalCID(), Vouched: d.Vouched()}
		for _, c := range d.CIDs {
			out.Aliases[c] = must[store.RootID](tb)(s.GetByCID(ctx, c))
			byCID := must[store.Document](tb)(s.DocumentByCID(ctx, c))
			if byCID.Root != out.Aliases[c] {
				tb.Fatalf("DocumentByCID(%s) read root %s, GetByCID %s", c, byCID.Root, out.Aliases[c])
			}
		}
		if d.Local() {
			out.Own[r] = must[store.Hashes](tb)(s.Own(ctx, r))
			out.Announced[r] = must[string](tb)(s.Announced(ctx, r))
		}
	}
	paths := must[[]string](tb)(s.PathsAfter(ctx, "", 1_000_000))
	for _, p := range paths {
		st := must[store.PathState](tb)(s.Path(ctx, p))
		out.Paths[p] = st
		if st.Dev != 0 || st.Ino != 0 {
			k := fmt.Sprintf("%d:%d", st.Dev, st.Ino)
			out.Inodes[k] = must[[]string](tb)(s.PathsOfInode(ctx, st.Dev, st.Ino))
		}
	}
	all := must[[]store.Event](tb)(s.Events(ctx, "", 1_000_000))
	positions := []string{""}
	for i := 0; i < len(all); i += 7 {
		positions = append(positions, all[i].ID)
	}
	for _, pos := range positions {
		f := s.Feed(pos)
		var got []store.Event
		for {
			evs := must[[]store.Event](tb)(f.Next(ctx, 5, 0))
			if len(evs) == 0 {
				break
			}
			got = append(got, evs...)
		}
		out.Feed[pos] = got
	}
	for _, q := range fixtureQueries {
		page := must[store.SearchPage](tb)(s.Search(ctx, q, 100, ""))
		sort.Slice(page.Hits, func(i, j int) bool { return page.Hits[i].CID < page.Hits[j].CID })
		out.Search[q] = page.Hits
	}
	return out
}

// buildFixture writes the fixture's library through the public
// operations: local files with metadata, duplicates, hard links, a
// symlink, an unconfirmed arrival, a midhash collision, renames, a
// removal, an alias, files known only from peers, a peer's learned
// member, a conflict, outside writers' fields, the search index.
func buildFixture(tb testing.TB, s *store.Store) {
	tb.Helper()
	movie := func(title, year string) store.Meta {
		return store.Meta{Version: 1, Owned: []string{"titles", "movieYear", "videoType", "mimeType", "fileType"},
			Fields: map[string]string{"titles/eng": title, "movieYear": year, "videoType": "movie", "mimeType": "video/matroska", "fileType": "video"}}
	}
	episode := func(show, s, e string) store.Meta {
		return store.Meta{Version: 1, Owned: []string{"titles", "season", "episode", "videoType", "mimeType", "fileType"},
			Fields: map[string]string{"titles/eng": show, "season": s, "episode": e, "videoType": "episode", "mimeType": "video/matroska", "fileType": "video"}}
	}
	items := []store.IngestItem{
		{File: store.FileStat{Path: "/lib/Movies/Inception (2010)/Inception.2010.1080p.mkv", Size: 1001, MtimeNs: 1_700_000_000_000_000_001, Dev: 1, Ino: 1}, Hashes: content{1, 1}.hashes(), Meta: movie("Inception", "2010")},
		{File: store.FileStat{Path: "/lib/Movies/The Matrix (1999)/The.Matrix.1999.mkv", Size: 1002, MtimeNs: 1_700_000_000_000_000_002, Dev: 1, Ino: 2}, Hashes: content{2, 2}.hashes(), Meta: movie("The Matrix", "1999")},
		{File: store.FileStat{Path: "/lib/Shows/Dark/Season 1/Dark.S01E01.mkv", Size: 1003, MtimeNs: 1_700_000_000_000_000_003, Dev: 1, Ino: 3}, Hashes: content{3, 3}.hashes(), Meta: episode("Dark", "1", "1")},
		{File: store.FileStat{Path: "/lib/Shows/Dark/Season 1/Dark.S01E02.mkv", Size: 1004, MtimeNs: 1_700_000_000_000_000_004, Dev: 1, Ino: 4}, Hashes: content{4, 4}.hashes(), Meta: episode("Dark", "1", "2")},
		// A copy of Inception: a duplicate of its root.
		{File: store.FileStat{Path: "/lib/Backup/inception-copy.mkv", Size: 1001, MtimeNs: 1_700_000_000_000_000_005, Dev: 1, Ino: 5}, Hashes: content{1, 1}.hashes(), Meta: movie("Inception", "2010")},
		// A path that is not UTF-8.
		{File: store.FileStat{Path: "/lib/Movies/Caf\xe9 (2001).mkv", Size: 1006, MtimeNs: 1_700_000_000_000_000_006, Dev: 1, Ino: 6}, Hashes: content{6, 6}.hashes(), Meta: movie("Cafe", "2001")},
		// A midhash collision: same midhash as the Matrix, other bytes.
		{File: store.FileStat{Path: "/lib/Movies/Collides.mkv", Size: 1002, MtimeNs: 1_700_000_000_000_000_007, Dev: 1, Ino: 7}, Hashes: content{2, 7}.hashes(), Meta: movie("Collides", "2007")},
	}
	for i := 10; i < 22; i++ {
		items = append(items, store.IngestItem{
			File:   store.FileStat{Path: "/lib/Films/Film " + string(rune('A'+i-10)) + " (2015).mkv", Size: int64(2000 + i), MtimeNs: 1_700_000_000_000_000_000 + int64(i), Dev: 1, Ino: uint64(100 + i)},
			Hashes: content{i, i}.hashes(), Meta: movie("Film "+string(rune('A'+i-10)), "2015")})
	}
	must[[]store.IngestResult](tb)(s.IngestBatch(ctx, items))
	// A hard link of the Matrix, and a symlink to Dark S01E01.
	ingest(tb, s, store.FileStat{Path: "/lib/Links/matrix-hardlink.mkv", Size: 1002, MtimeNs: 1_700_000_000_000_000_002, Dev: 1, Ino: 2}, content{2, 2})
	ingest(tb, s, store.FileStat{Path: "/lib/Links/dark-1.mkv", Size: 1003, MtimeNs: 1_700_000_000_000_000_003, Link: true}, content{3, 3})
	// An arrival whose full hash never came.
	must[store.Outcome](tb)(s.Arrive(ctx, stat("/lib/Incoming/big.mkv", 9_000_000), content{30, 30}.hashes().Midhash))
	// A rename, a removal (the Film L file), a changed file.
	must[store.Outcome](tb)(s.Rename(ctx, "/lib/Films/Film B (2015).mkv", "/lib/Films/Film B (2016).mkv"))
	must[store.Outcome](tb)(s.RemovePath(ctx, "/lib/Films/Film L (2015).mkv"))
	must[store.Outcome](tb)(s.Change(ctx, store.FileStat{Path: "/lib/Films/Film C (2015).mkv", Size: 3000, MtimeNs: 1_700_000_000_000_009_000, Dev: 1, Ino: 112}, content{40, 40}.hashes()))
	// An alias supplied by the household.
	inception := must[store.RootID](tb)(s.GetByCID(ctx, content{1, 1}.hashes().SHA256))
	if err := s.AddAlias(ctx, inception, strongCID(1)); err != nil {
		tb.Fatal(err)
	}
	// Outside writers' fields.
	must[int](tb)(s.SetFields(ctx, inception, map[string]string{"plot/eng": "A thief who steals secrets.", "genre/0": "Science Fiction", "rating": "8.8"}))
	// Peers: a file known only from peers, with fields; a learned member
	// of a local file; a record linking two local files (a conflict); a
	// weak-only record.
	merge(tb, s, peerA, []string{content{50, 50}.hashes().SHA256, content{50, 50}.hashes().IPFS, strongCID(50)},
		map[string]string{"titles/eng": "A Peer Film", "movieYear": "2012", "fileType": "video", "sizeByte": "5000"})
	merge(tb, s, peerB, []string{content{50, 50}.hashes().SHA256, weakCID(50)}, map[string]string{"plot/eng": "Only peer B knows."})
	merge(tb, s, peerA, []string{content{2, 2}.hashes().SHA256, fabricated(content{2, 2})}, map[string]string{"titles/eng": "Matrix, says A"})
	merge(tb, s, peerB, []string{content{3, 3}.hashes().SHA256, content{4, 4}.hashes().SHA256}, nil)
	merge(tb, s, peerB, []string{weakCID(60)}, map[string]string{"titles/eng": "Weak peer thing"})
	for _, r := range must[[]store.RootID](tb)(s.RootIDs(ctx)) {
		if err := s.IndexRoot(ctx, r); err != nil {
			tb.Fatal(err)
		}
	}
	mustCheck(tb, s)
}

// TestWriteFixtureV1 wrote testdata/v1 with the release whose layout it
// is; run with METAMESH_WRITE_FIXTURE=1 only on that release.
func TestWriteFixtureV1(t *testing.T) {
	if os.Getenv("METAMESH_WRITE_FIXTURE") != "1" {
		t.Skip("writes the layout-1 fixture; only on the layout-1 release")
	}
	s := storetest.New(t)
	buildFixture(t, s)
	var log bytes.Buffer
	if err := s.DebugWriteCommandLog(ctx, &log); err != nil {
		t.Fatal(err)
	}
	reads, err := json.MarshalIndent(readAll(t, s), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "v1")
	if err := os.WriteFile(filepath.Join(dir, "store.cmds"), log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reads.json"), append(reads, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// The log rebuilds the same reads.
	srv := storetest.Server(t)
	if err := store.DebugReplayCommandLog(ctx, srv.URL(), bytes.NewReader(log.Bytes())); err != nil {
		t.Fatal(err)
	}
	s2 := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL(), Logger: storetest.Logger(t)}))
	defer s2.Close()
	again, _ := json.MarshalIndent(readAll(t, s2), "", " ")
	if !bytes.Equal(reads, again) {
		t.Fatal("the replayed command log reads differently")
	}
	mustCheck(t, s2)
}
