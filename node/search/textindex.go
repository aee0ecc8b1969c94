package search

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/metamesh/node/node/derived"
	"github.com/metamesh/node/store"
)

// TextIndex is the household's search index: every root's search text
// (Text: its title tokens and its other tokens, and a sort key of its
// summary)
// in a bleve index under the data directory, or in memory. Redis stays
// the one source of truth: the indexer puts every root it reads here,
// its start-up sweep puts them all and drops what no root holds any
// more, so an index that is missing or of another version is simply
// built anew, and one that is damaged (it does not open, a segment fails
// its checksum, bleve panics while opening it or while it runs) is moved
// aside (derived.MoveAside), logged at WARN, and built anew the same
// way. Safe for concurrent use (bleve's own locking).
type TextIndex struct {
	dir string // "": in memory
	// ixMu guards idx: every bleve call holds it to read, a rebuild to
	// write. idx is nil while a damaged index could not be made anew.
	ixMu sync.RWMutex
	idx  bleve.Index
	// opened is what OpenTextIndex found damaged (nil: nothing), for the
	// indexer to log; failedAt, when a rebuild last failed.
	opened   *damage
	failedAt time.Time
	closed   bool
	// log and rebuilt are the indexer's (setIndexer): the log of a
	// rebuild while the node runs, and the sweep that fills it.
	log     *slog.Logger
	rebuilt func()
	// mu guards batch, the puts not yet written (Flush), and orders Keep
	// with them.
	mu    sync.Mutex
	batch *bleve.Batch
	// keys are the sort keys of the roots put since the start (the
	// sweep puts every root), kept in memory rather than loaded from
	// the index for every candidate of a search.
	keys sync.Map // store.RootID → string
}

// damage is an index found damaged, and where it was moved.
type damage struct {
	err     error
	movedTo string
}

// ErrUnavailable: the search index was found damaged and could not be
// made anew yet (a full disk); it is tried again at most every
// retryRebuild.
var ErrUnavailable = errors.New("search index unavailable")

// retryRebuild is how often a search index that could not be made anew
// is tried again.
const retryRebuild = 30 * time.Second

// maxBatch is how many puts a batch gathers before it is written: bleve
// writes a segment per batch, and one per root would make a sweep of a
// large library slow.
const maxBatch = 1000

// textIndexVersion names what the index holds and how; an index of
// another version is built anew.
const textIndexVersion = "2" // 2: a home video's recorded day

// maxCandidates bounds the roots a search ranks: the best of them by
// bleve's own score are ranked by the node's rules (match.go). A query
// matching more roots than that pages through those.
const maxCandidates = 1000

// OpenTextIndex opens the index under dir, or makes it anew when it is
// missing or of another version, or (moved aside first) when it does
// not open, a segment fails its checksum or bleve panics opening it;
// dir "" keeps it in memory.
func OpenTextIndex(dir string) (*TextIndex, error) {
	t := &TextIndex{dir: dir, log: slog.New(slog.DiscardHandler)}
	if dir == "" {
		idx, err := bleve.NewMemOnly(textMapping())
		if err != nil {
			return nil, fmt.Errorf("search index: %w", err)
		}
		t.idx = idx
		return t, nil
	}
	path := filepath.Join(dir, "index")
	if v, err := os.ReadFile(filepath.Join(dir, "VERSION")); err == nil && strings.TrimSpace(string(v)) == textIndexVersion {
		idx, err := openChecked(path)
		if err == nil {
			t.idx = idx
			return t, nil
		}
		moved, merr := derived.MoveAside(dir)
		if merr != nil {
			return nil, fmt.Errorf("search index: %w (and %w)", err, merr)
		}
		t.opened = &damage{err: err, movedTo: moved}
	}
	idx, err := createIndex(dir)
	if err != nil {
		return nil, err
	}
	t.idx = idx
	return t, nil
}

// createIndex makes an empty index in dir, whatever was there removed.
func createIndex(dir string) (idx bleve.Index, err error) {
	defer derived.Recover(&err)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	idx, err = bleve.New(filepath.Join(dir, "index"), textMapping())
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte(textIndexVersion+"\n"), 0o600); err != nil {
		idx.Close()
		return nil, fmt.Errorf("search index: %w", err)
	}
	return idx, nil
}

// openChecked opens the index at path once every segment passed its
// checksum, bleve's panics recovered.
func openChecked(path string) (idx bleve.Index, err error) {
	if err := checkSegments(filepath.Join(path, "store")); err != nil {
		return nil, err
	}
	defer derived.Recover(&err)
	return bleve.Open(path)
}

// checkSegments checks each segment's CRC-32 (zap's last 4 bytes, of
// every byte before them): bleve does not, and reads a damaged segment
// until it panics.
func checkSegments(dir string) error {
	zaps, err := filepath.Glob(filepath.Join(dir, "*.zap"))
	if err != nil {
		return err
	}
	for _, z := range zaps {
		b, err := os.ReadFile(z)
		if err != nil {
			return err
		}
		if len(b) < 4 || crc32.ChecksumIEEE(b[:len(b)-4]) != binary.BigEndian.Uint32(b[len(b)-4:]) {
			return fmt.Errorf("segment %s: checksum mismatch", z)
		}
	}
	return nil
}

// setIndexer gives the index the indexer's log, and the sweep that fills
// it after a rebuild, and logs what OpenTextIndex found damaged.
func (t *TextIndex) setIndexer(log *slog.Logger, rebuilt func()) {
	t.ixMu.Lock()
	t.log, t.rebuilt = log, rebuilt
	d := t.opened
	t.opened = nil
	t.ixMu.Unlock()
	if d != nil {
		log.Warn("search index: does not open; moved aside, built anew from the store", "err", d.err, "dir", t.dir, "movedTo", d.movedTo)
	}
}

// use runs f on the index, read-locked, a panic recovered: a panic says
// the index is damaged, and it is made anew (rebuild).
func (t *TextIndex) use(f func(idx bleve.Index) error) (err error) {
	t.ixMu.RLock()
	idx, failedAt := t.idx, t.failedAt
	if idx != nil {
		func() {
			defer derived.Recover(&err)
			err = f(idx)
		}()
	}
	t.ixMu.RUnlock()
	var pe *derived.PanicError
	switch {
	case idx == nil:
		if time.Since(failedAt) >= retryRebuild {
			t.rebuild(ErrUnavailable)
		}
		return ErrUnavailable
	case errors.As(err, &pe):
		t.rebuild(err)
		return fmt.Errorf("search index: %w", err)
	}
	return err
}

// rebuild replaces a damaged index with an empty one, the old one moved
// aside, and has the indexer sweep into it.
func (t *TextIndex) rebuild(cause error) {
	t.ixMu.Lock()
	if t.closed {
		t.ixMu.Unlock()
		return
	}
	old := t.idx
	t.idx = nil
	if old != nil {
		func() {
			var err error
			defer derived.Recover(&err)
			old.Close()
		}()
	}
	var moved string
	var err error
	if t.dir == "" {
		t.idx, err = bleve.NewMemOnly(textMapping())
	} else if old != nil {
		moved, err = derived.MoveAside(t.dir)
	}
	if err == nil && t.dir != "" {
		t.idx, err = createIndex(t.dir)
	}
	if err != nil {
		t.failedAt = time.Now()
	}
	log, rebuilt := t.log, t.rebuilt
	t.ixMu.Unlock()
	if err != nil {
		log.Warn("search index: damaged; searches fail until it can be made anew", "err", cause, "dir", t.dir, "movedTo", moved, "createErr", err)
		return
	}
	log.Warn("search index: damaged while running; moved aside, built anew from the store", "err", cause, "dir", t.dir, "movedTo", moved)
	if rebuilt != nil {
		rebuilt()
	}
}

// textMapping indexes the node's own tokens as they are (split at
// spaces, nothing folded again: protocol.Tokens folded them), with their
// positions for ranking.
func textMapping() mapping.IndexMapping {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer("tokens", map[string]any{"type": custom.Name, "tokenizer": whitespace.Name}); err != nil {
		panic(err) // a constant analyzer: never
	}
	text := bleve.NewTextFieldMapping()
	text.Analyzer = "tokens"
	text.IncludeTermVectors = true
	text.Store = false
	doc := bleve.NewDocumentMapping()
	doc.AddFieldMappingsAt("title", text)
	doc.AddFieldMappingsAt("other", text)
	m.DefaultMapping = doc
	m.DefaultAnalyzer = "tokens"
	return m
}

// Close writes what is gathered and closes the index.
func (t *TextIndex) Close() (err error) {
	ferr := t.Flush()
	if errors.Is(ferr, ErrUnavailable) {
		ferr = nil
	}
	t.ixMu.Lock()
	defer t.ixMu.Unlock()
	t.closed = true
	if t.idx == nil {
		return ferr
	}
	defer derived.Recover(&err)
	return errors.Join(ferr, t.idx.Close())
}

// Put indexes root's entry: its search text, its sort key made of its
// summary; an entry without text (a root gone, a sidecar) leaves the
// index. Puts are written in batches: searches see them after Flush (or
// once maxBatch of them gathered).
func (t *TextIndex) Put(root store.RootID, in Entry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.batch == nil {
		if err := t.use(func(idx bleve.Index) error { t.batch = idx.NewBatch(); return nil }); err != nil {
			return err
		}
	}
	if in.Text.Empty() {
		t.batch.Delete(string(root))
		t.keys.Delete(root)
	} else {
		if err := t.batch.Index(string(root), map[string]any{
			"title": strings.Join(in.Text.Title, " "), "other": strings.Join(in.Text.Other, " "),
		}); err != nil {
			return err
		}
		t.keys.Store(root, sortKey(in.Summary))
	}
	if t.batch.Size() >= maxBatch {
		return t.flushLocked()
	}
	return nil
}

// Flush writes the puts gathered so far.
func (t *TextIndex) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flushLocked()
}

// flushLocked writes the batch; a batch bleve fails to write is dropped
// (a rebuild's sweep, or the next put of its roots, writes them again).
func (t *TextIndex) flushLocked() error {
	if t.batch == nil || t.batch.Size() == 0 {
		return nil
	}
	b := t.batch
	t.batch = nil
	return t.use(func(idx bleve.Index) error { return idx.Batch(b) })
}

// Compact merges the index's segments into one: bleve writes a segment
// a batch and merges them as it goes, but after a sweep that put a whole
// library a query still reads several, and its cost grows with them.
// It returns once the merge is done.
func (t *TextIndex) Compact(ctx context.Context) error {
	return t.use(func(idx bleve.Index) error {
		adv, err := idx.Advanced()
		if err != nil {
			return err
		}
		sc, ok := adv.(*scorch.Scorch)
		if !ok {
			return nil
		}
		// A merge takes at most ten segments at a time: again while
		// that leaves more than one, and it helps.
		for n := segments(sc); n > 1; {
			if err := sc.ForceMerge(ctx, nil); err != nil {
				return err
			}
			m := segments(sc)
			if m >= n {
				break
			}
			n = m
		}
		return nil
	})
}

// Segments is how many segments a query reads now.
func (t *TextIndex) Segments() int {
	n := 0
	_ = t.use(func(idx bleve.Index) error {
		adv, err := idx.Advanced()
		if err != nil {
			return err
		}
		if sc, ok := adv.(*scorch.Scorch); ok {
			n = segments(sc)
		}
		return nil
	})
	return n
}

func segments(sc *scorch.Scorch) int {
	m := sc.StatsMap()
	n, _ := m["TotFileSegmentsAtRoot"].(uint64)
	k, _ := m["TotMemorySegmentsAtRoot"].(uint64)
	return int(n + k)
}

// Keep drops every root the index holds that roots does not name (after
// a sweep put every root the store holds).
func (t *TextIndex) Keep(roots map[store.RootID]bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.flushLocked(); err != nil {
		return err
	}
	return t.use(func(idx bleve.Index) error {
		n, err := idx.DocCount()
		if err != nil {
			return err
		}
		var gone []string
		for from := 0; from < int(n); from += 10_000 {
			res, err := idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 10_000, from, false))
			if err != nil {
				return err
			}
			for _, h := range res.Hits {
				if !roots[store.RootID(h.ID)] {
					gone = append(gone, h.ID)
				}
			}
		}
		if len(gone) == 0 {
			return nil
		}
		b := idx.NewBatch()
		for _, id := range gone {
			b.Delete(id)
			t.keys.Delete(store.RootID(id))
		}
		return idx.Batch(b)
	})
}

// Match is one root a search found: how many of the query's words it
// holds, how many of them exactly, and their weights (2 in a title, 1
// elsewhere).
type Match struct {
	Root                  store.RootID
	Matched, Exact, Score int
}

// Result is one page of a search.
type Result struct {
	Matches []Match
	Total   int    // matches in all (of at most maxCandidates ranked)
	Next    string // cursor of the next page; "" on the last
}

// ErrInvalidCursor: a cursor Search did not hand out for the same query.
var ErrInvalidCursor = errors.New("invalid search cursor")

// Search finds roots by text, ranked by the node's rules (match.go): every
// word exact, then every word, then fewer words (more first); then more
// words exact, then more by prefix than by typo; then title matches
// before others; then by title, season and episode (the sort key); then
// root. limit is 1..store.MaxSearchLimit; cursor "" or a Next of the same
// query.
func (t *TextIndex) Search(q string, limit int, cursor string) (Result, error) {
	if limit <= 0 || limit > store.MaxSearchLimit {
		return Result{}, fmt.Errorf("search limit %d: want 1..%d", limit, store.MaxSearchLimit)
	}
	words := queryWords(q)
	toks := wordTokens(words)
	offset := 0
	if cursor != "" {
		var err error
		if offset, err = readCursor(cursor, toks); err != nil {
			return Result{}, err
		}
	}
	if len(words) == 0 {
		return Result{}, nil
	}
	var any []query.Query
	for _, w := range words {
		for _, field := range []string{"title", "other"} {
			tq := bleve.NewTermQuery(w.token)
			tq.SetField(field)
			any = append(any, tq)
			if w.prefix {
				pq := bleve.NewPrefixQuery(w.token)
				pq.SetField(field)
				any = append(any, pq)
			}
			if w.fuzzy && field == "title" { // a typo is looked for in titles
				// One edit (Levenshtein), and each swap of two
				// neighbouring letters, which is one edit too.
				fq := bleve.NewFuzzyQuery(w.token)
				fq.SetFuzziness(1)
				fq.SetField(field)
				any = append(any, fq)
				for _, v := range swaps(w.token) {
					tq := bleve.NewTermQuery(v)
					tq.SetField(field)
					any = append(any, tq)
				}
			}
		}
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(any...), maxCandidates, 0, false)
	req.IncludeLocations = true
	var res *bleve.SearchResult
	err := t.use(func(idx bleve.Index) (err error) { res, err = idx.Search(req); return err })
	if err != nil {
		return Result{}, fmt.Errorf("search: %w", err)
	}
	type ranked struct {
		Match
		prefix int
		key    string
	}
	var all []ranked
	for _, h := range res.Hits {
		r := ranked{Match: Match{Root: store.RootID(h.ID)}}
		for _, w := range words {
			q, wt := best(w, h)
			if q < 0 {
				continue
			}
			r.Matched++
			r.Score += wt
			switch q {
			case 0:
				r.Exact++
			case 1:
				r.prefix++
			}
		}
		if r.Matched == 0 {
			continue
		}
		if k, ok := t.keys.Load(r.Root); ok {
			r.key = k.(string)
		}
		all = append(all, r)
	}
	tier := func(r ranked) int {
		switch {
		case r.Matched < len(words):
			return 2
		case r.Exact < len(words):
			return 1
		}
		return 0
	}
	slices.SortFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(tier(a), tier(b)), cmp.Compare(b.Matched, a.Matched), cmp.Compare(b.Exact, a.Exact),
			cmp.Compare(b.prefix, a.prefix), cmp.Compare(b.Score, a.Score), cmp.Compare(a.key, b.key), cmp.Compare(a.Root, b.Root))
	})
	out := Result{Total: len(all)}
	for _, r := range all[min(offset, len(all)):min(offset+limit, len(all))] {
		out.Matches = append(out.Matches, r.Match)
	}
	if next := offset + limit; next < len(all) {
		out.Next = writeCursor(next, toks)
	}
	return out, nil
}

// best is how hit h holds word w: 0 exactly, 1 by prefix, 2 one edit
// away, -1 not at all; and the weight of the field that holds it so (2
// a title, 1 elsewhere), the best quality first.
func best(w queryWord, h *search.DocumentMatch) (quality, weight int) {
	quality = -1
	for field, terms := range h.Locations {
		wt := 1
		if field == "title" {
			wt = 2
		}
		for term := range terms {
			q := -1
			switch {
			case term == w.token:
				q = 0
			case w.prefix && strings.HasPrefix(term, w.token):
				q = 1
			case w.fuzzy && oneEdit(term, w.token):
				q = 2
			}
			if q >= 0 && (quality < 0 || q < quality || (q == quality && wt > weight)) {
				quality, weight = q, wt
			}
		}
	}
	return quality, weight
}
