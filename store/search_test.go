package store_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// The search index is node/search's TextIndex, fed from the store (a
// root's Document) and read back through it (SearchHits): these tests
// keep one in memory per store, as the node's indexer keeps one on disk.
var texts sync.Map // *store.Store → *search.TextIndex

func textOf(tb testing.TB, s *store.Store) *search.TextIndex {
	tb.Helper()
	if t, ok := texts.Load(s); ok {
		return t.(*search.TextIndex)
	}
	t := must[*search.TextIndex](tb)(search.OpenTextIndex(""))
	if old, loaded := texts.LoadOrStore(s, t); loaded {
		t.Close()
		return old.(*search.TextIndex)
	}
	tb.Cleanup(func() { texts.Delete(s); t.Close() })
	return t
}

// index indexes root as the node's indexer does, from its document (the
// zero Document once it is gone), and returns the document.
func index(tb testing.TB, s *store.Store, root store.RootID) store.Document {
	tb.Helper()
	d, err := s.Document(ctx, root)
	var e search.Entry // a root gone leaves the index
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		tb.Fatal(err)
	default:
		e = search.EntryOf(d)
	}
	if err := textOf(tb, s).Put(root, e); err != nil {
		tb.Fatal(err)
	}
	if err := textOf(tb, s).Flush(); err != nil {
		tb.Fatal(err)
	}
	return d
}

// addFile ingests a file with extracted metadata and indexes it.
func addFile(tb testing.TB, s *store.Store, path string, c content, fields map[string]string) store.RootID {
	tb.Helper()
	o, _, err := s.Ingest(ctx, stat(path, int64(1000+c.full)), c.hashes(), store.Meta{Version: 1, Owned: []string{"titles", "originalTitle", "movieYear", "season", "episode", "episodeTitle"}, Fields: fields})
	if err != nil {
		tb.Fatal(err)
	}
	index(tb, s, o.Root)
	return o.Root
}

// searchPage is one page of a search: its hits as the store reads them,
// with how the index matched each.
type searchPage struct {
	Hits    []store.SearchHit
	Matches []search.Match
	Total   int
	Next    string
}

func searchAt(tb testing.TB, s *store.Store, q string, limit int, cursor string) (searchPage, error) {
	tb.Helper()
	res, err := textOf(tb, s).Search(q, limit, cursor)
	if err != nil {
		return searchPage{}, err
	}
	roots := make([]store.RootID, len(res.Matches))
	for i, m := range res.Matches {
		roots[i] = m.Root
	}
	hits, err := s.SearchHits(ctx, roots)
	return searchPage{Hits: hits, Matches: res.Matches, Total: res.Total, Next: res.Next}, err
}

func titles(p searchPage) []string {
	var out []string
	for _, h := range p.Hits {
		out = append(out, h.Title)
	}
	return out
}

func searchTitles(tb testing.TB, s *store.Store, q string) []string {
	tb.Helper()
	p, err := searchAt(tb, s, q, 100, "")
	if err != nil {
		tb.Fatal(err)
	}
	return titles(p)
}

func TestSearch_RankingAndFields(t *testing.T) {
	s := storetest.New(t)
	addFile(t, s, "/lib/Matrix.1999.mkv", content{1, 1}, map[string]string{"titles/eng": "The Matrix", "originalTitle": "The Matrix", "movieYear": "1999"})
	addFile(t, s, "/lib/Matrix.Reloaded.mkv", content{2, 2}, map[string]string{"titles/eng": "The Matrix Reloaded", "movieYear": "2003"})
	addFile(t, s, "/lib/amelie.mkv", content{3, 3}, map[string]string{"titles/eng": "Le Fabuleux Destin d'Amélie Poulain", "movieYear": "2001"})
	addFile(t, s, "/lib/Show.S02E05.mkv", content{4, 4}, map[string]string{"titles/eng": "Show", "season": "2", "episode": "5", "episodeTitle": "Reloaded Matters"})
	addFile(t, s, "/lib/untitled reloaded matrix.avi", content{5, 5}, nil)

	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"amelie", []string{"Le Fabuleux Destin d'Amélie Poulain"}},
		{"AMÉLIE poulain", []string{"Le Fabuleux Destin d'Amélie Poulain"}},
		{"1999", []string{"The Matrix"}},
		{"s2e5", []string{"Show"}},
		{"S02E05", []string{"Show"}},
		{"show s02", []string{"Show"}},
		// All tokens in a title, then all tokens in the file name, then
		// partial matches (more tokens first).
		{"matrix reloaded", []string{"The Matrix Reloaded", "untitled reloaded matrix.avi", "Show", "The Matrix"}},
		{"mkv", []string{"The Matrix", "The Matrix Reloaded", "Le Fabuleux Destin d'Amélie Poulain", "Show"}},
		{"nothing-here", nil},
		{"!!!", nil},
	} {
		t.Run(tc.q, func(t *testing.T) {
			got := searchTitles(t, s, tc.q)
			// Ties (same tokens, same weight) come in root order.
			switch tc.q {
			case "mkv":
				slices.Sort(got)
				slices.Sort(tc.want)
			case "matrix reloaded":
				if len(got) == 4 {
					slices.Sort(got[2:])
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Search(%q) = %q, want %q", tc.q, got, tc.want)
			}
		})
	}
	p, err := searchAt(t, s, "1999", 10, "")
	if err != nil || len(p.Hits) != 1 {
		t.Fatalf("Search = %+v, %v", p, err)
	}
	h := p.Hits[0]
	c := content{1, 1}.hashes()
	if h.CID != c.IPFS || h.Year != 1999 || h.Size != 1001 || h.Source != "local" || len(h.CIDs) != 3 {
		t.Errorf("hit = %+v", h)
	}
}

func TestSearch_Pagination(t *testing.T) {
	s := storetest.New(t)
	for i := range 7 {
		addFile(t, s, "/lib/f"+string(rune('a'+i))+".mkv", content{10 + i, 10 + i}, map[string]string{"titles/eng": "Common Title " + string(rune('A'+i))})
	}
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := searchAt(t, s, "common", 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 7 {
			t.Errorf("Total = %d, want 7", p.Total)
		}
		all = append(all, titles(p)...)
		if p.Next == "" {
			if pages != 2 {
				t.Errorf("pages = %d, want 3", pages+1)
			}
			break
		}
		cursor = p.Next
	}
	if len(all) != 7 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != 7 {
		t.Errorf("pages gave %q, want 7 distinct titles", all)
	}
	for _, bad := range []string{"%%%", "AAAAAAAAAAAA", "aGVsbG8"} {
		if _, err := searchAt(t, s, "common", 3, bad); !errors.Is(err, search.ErrInvalidCursor) {
			t.Errorf("cursor %q: err = %v, want ErrInvalidCursor", bad, err)
		}
	}
	p, _ := searchAt(t, s, "common", 3, "")
	if _, err := searchAt(t, s, "title", 3, p.Next); !errors.Is(err, search.ErrInvalidCursor) {
		t.Errorf("another query's cursor: err = %v, want ErrInvalidCursor", err)
	}
	if _, err := searchAt(t, s, "common", 0, ""); err == nil {
		t.Error("limit 0 accepted")
	}
}

func TestSearch_Removal(t *testing.T) {
	s := storetest.New(t)
	r := addFile(t, s, "/lib/Alpha.mkv", content{20, 20}, map[string]string{"titles/eng": "Alpha Centauri"})

	t.Run("re-extraction", func(t *testing.T) {
		_, _, err := s.SetExtracted(ctx, "/lib/Alpha.mkv", store.Meta{Version: 2, Owned: []string{"titles"}, Fields: map[string]string{"titles/eng": "Beta Pictoris"}})
		if err != nil {
			t.Fatal(err)
		}
		index(t, s, r)
		if got := searchTitles(t, s, "centauri"); got != nil {
			t.Errorf("old title still found: %q", got)
		}
		if got := searchTitles(t, s, "pictoris"); !reflect.DeepEqual(got, []string{"Beta Pictoris"}) {
			t.Errorf("new title: %q", got)
		}
	})
	t.Run("rename", func(t *testing.T) {
		if _, err := s.Rename(ctx, "/lib/Alpha.mkv", "/lib/Gamma.mkv"); err != nil {
			t.Fatal(err)
		}
		index(t, s, r)
		if got := searchTitles(t, s, "alpha"); got != nil {
			t.Errorf("old file name still found: %q", got)
		}
		if got := searchTitles(t, s, "gamma"); len(got) != 1 {
			t.Errorf("new file name: %q", got)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if _, err := s.RemovePath(ctx, "/lib/Gamma.mkv"); err != nil {
			t.Fatal(err)
		}
		if got := searchTitles(t, s, "pictoris"); got != nil {
			t.Errorf("deleted root found before re-indexing: %q", got)
		}
		// The delete took the root's postings with it, before any
		// re-indexing.
		dump := must[map[string]string](t)(s.DebugDump(ctx))
		for k, v := range dump {
			if strings.HasPrefix(k, "tok:") || strings.HasPrefix(k, "toks:") || strings.HasPrefix(k, "tk:") && strings.Contains(v, string(r)) {
				t.Errorf("index key left after delete: %s = %s", k, v)
			}
		}
		index(t, s, r)
	})
}

func TestSearch_PeerOnlyRoots(t *testing.T) {
	s := storetest.New(t)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	p, _ := peer.IDFromPrivateKey(k)
	c := content{30, 30}.hashes()
	res, err := s.MergeRecord(ctx, p.String(), []string{c.IPFS, c.SHA256, c.Midhash}, map[string]string{"titles/eng": "Remote Only Film", "sizeByte": "4242"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := s.GetByCID(ctx, c.IPFS)
	if err != nil {
		t.Fatal(err, res)
	}
	if keyed := search.KeyTokens(index(t, s, root)); keyed != nil {
		t.Errorf("a root known only from a peer gives key tokens %q", keyed)
	}
	pg, err := searchAt(t, s, "remote film", 10, "")
	if err != nil || len(pg.Hits) != 1 {
		t.Fatalf("Search = %+v, %v", pg, err)
	}
	if h := pg.Hits[0]; h.Source != p.String() || h.CID != c.IPFS || h.Title != "Remote Only Film" || h.Size != 4242 {
		t.Errorf("hit = %+v", h)
	}
}

// A re-extraction's fields reach the store's changes: the root is handed
// again with its new document, which gives its new search text.
func TestChanges_SeeReextraction(t *testing.T) {
	s := storetest.New(t)
	r := addFile(t, s, "/lib/w.mkv", content{40, 40}, map[string]string{"titles/eng": "Old"})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan store.Changed, 16)
	ch := s.Changes(store.Consumer{Name: "the test", Fields: search.Field, Take: func(_ context.Context, b store.ChangeBatch) error {
		if !b.Sweep {
			for _, c := range b.Roots {
				got <- c
			}
		}
		return nil
	}})
	go ch.Run(wctx)
	<-s.Following()
	if _, _, err := s.SetExtracted(ctx, "/lib/w.mkv", store.Meta{Version: 5, Owned: []string{"titles"}, Fields: map[string]string{"titles/eng": "New"}}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case g := <-got:
			if g.Root == r && slices.Contains(search.TextOf(g.Document).Title, "new") {
				return
			}
		case <-waiting.After():
			t.Fatal("no change of the re-extraction")
		}
	}
}

// IMDb, TMDB and TVDB IDs and genres are searchable: an ID as a title
// word, a genre as any other word.
func TestSearch_IDsAndGenres(t *testing.T) {
	s := storetest.New(t)
	addFile(t, s, "/lib/Inception.mkv", content{60, 60}, map[string]string{"titles/eng": "Inception", "imdbid": "tt1375666",
		"tmdbid": "27205", "genre/0": "Science Fiction", "genre/1": "Action"})
	addFile(t, s, "/lib/Show.S01E01.mkv", content{61, 61}, map[string]string{"titles/eng": "Show", "tvdbid": "81189",
		"genre/0": "Drama"})
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"tt1375666", []string{"Inception"}},
		{"TT1375666", []string{"Inception"}},
		{"27205", []string{"Inception"}},
		{"81189", []string{"Show"}},
		{"fiction", []string{"Inception"}},
		{"drama", []string{"Show"}},
		{"tt0000001", nil},
	} {
		if got := searchTitles(t, s, tt.q); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("search %q = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestSummaryOfFields: the node's rules for what a list shows of a file,
// from its flat fields alone: the title by precedence (title,
// titles/eng, originalTitle, the first other titles/<lang> by name, the
// file's name), the year (movieYear before year, neither when not a
// positive number), season and episode (0 is one, a negative or a word is
// none), the day recorded (a date, a month or a year; anything else is
// none), the size.
func TestSummaryOfFields(t *testing.T) {
	n := func(i int) *int { return &i }
	tests := []struct {
		name   string
		fields map[string]string
		want   store.Summary
	}{
		{"title first", map[string]string{"title": "Heat", "titles/eng": "Heat (1995)", "originalTitle": "Heat", "movieYear": "1995", "year": "1996", "sizeByte": "1234"},
			store.Summary{Title: "Heat", Year: 1995, Size: 1234}},
		{"english title", map[string]string{"titles/eng": "Amélie", "titles/fre": "Le Fabuleux Destin", "originalTitle": "Le Fabuleux Destin d'Amélie Poulain"},
			store.Summary{Title: "Amélie"}},
		{"original title", map[string]string{"originalTitle": "Nachtzug", "titles/ger": "Nachtzug nach Lissabon", "year": "2019"},
			store.Summary{Title: "Nachtzug", Year: 2019}},
		{"first other title", map[string]string{"titles/spa": "El tren", "titles/fre": "Le train"},
			store.Summary{Title: "Le train"}},
		{"file name from the path", map[string]string{"filePath": "/lib/Films/a.mkv", "fileName": "b.mkv"},
			store.Summary{Title: "a.mkv"}},
		{"file name", map[string]string{"fileName": "b.mkv"}, store.Summary{Title: "b.mkv"}},
		{"episode", map[string]string{"title": "Lighthouse Keepers", "season": "1", "episode": "0", "episodeTitle": "The Lamp",
			"fileType": "video", "imdbid": "tt0000001"},
			store.Summary{Title: "Lighthouse Keepers", Season: n(1), Episode: n(0), EpisodeTitle: "The Lamp", FileType: "video", IMDbID: "tt0000001"}},
		{"home video: no year or episode from its name", map[string]string{"title": "clip", "movieYear": "1964", "season": "1", "episode": "2", "episodeTitle": "x", "videoType": "other"},
			store.Summary{Title: "clip", VideoType: "other"}},
		{"home video: the day it was recorded", map[string]string{"title": "VID_20190314_181510", "videoType": "other", "recorded": "2019-03-14"},
			store.Summary{Title: "VID_20190314_181510", VideoType: "other", Recorded: "2019-03-14"}},
		{"recorded: a household's month or year", map[string]string{"title": "a", "recorded": "1964-07"}, store.Summary{Title: "a", Recorded: "1964-07"}},
		{"recorded: a year", map[string]string{"title": "a", "recorded": "1964"}, store.Summary{Title: "a", Recorded: "1964"}},
		{"recorded: no date", map[string]string{"title": "a", "recorded": "last summer"}, store.Summary{Title: "a"}},
		{"recorded: no such day", map[string]string{"title": "a", "recorded": "2019-02-30"}, store.Summary{Title: "a"}},
		{"film: no episode", map[string]string{"title": "Heat", "movieYear": "1995", "season": "1", "episode": "2", "videoType": "movie"},
			store.Summary{Title: "Heat", Year: 1995, VideoType: "movie"}},
		{"absolute episode: season 1", map[string]string{"titles/rom": "Shingeki no Kyojin", "originalTitle": "Shingeki no Kyojin", "episode": "25", "videoType": "episode", "anime": "true"},
			store.Summary{Title: "Shingeki no Kyojin", Season: n(1), Episode: n(25), VideoType: "episode"}},
		{"a show's country", map[string]string{"titles/eng": "The Office", "season": "2", "episode": "1", "videoType": "episode", "release/country": "US"},
			store.Summary{Title: "The Office (US)", Season: n(2), Episode: n(1), VideoType: "episode"}},
		{"a film's country is no part of it", map[string]string{"titles/eng": "Heat", "movieYear": "1995", "videoType": "movie", "release/country": "US"},
			store.Summary{Title: "Heat", Year: 1995, VideoType: "movie"}},
		{"no numbers", map[string]string{"title": "x", "movieYear": "0", "year": "soon", "season": "-1", "episode": "x", "sizeByte": "big"},
			store.Summary{Title: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.SummaryOfFields(tt.fields); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
