package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/metamesh/node/store"
)

// TextIndex is the household's search index: every root's search text
// (store.SearchText: its title tokens and its other tokens, and a sort
// key of its summary)
// in a bleve index under the data directory, or in memory. Redis stays
// the one source of truth: the indexer puts every root it reads here,
// its start-up sweep puts them all and drops what no root holds any
// more, so an index that is missing, unreadable or of another version
// is simply built anew. Safe for concurrent use (bleve's own locking).
type TextIndex struct {
	idx bleve.Index
	// mu guards batch, the puts not yet written (Flush), and orders Keep
	// with them.
	mu    sync.Mutex
	batch *bleve.Batch
	// keys are the sort keys of the roots put since the start (the
	// sweep puts every root), kept in memory rather than loaded from
	// the index for every candidate of a search.
	keys sync.Map // store.RootID → string
}

// maxBatch is how many puts a batch gathers before it is written: bleve
// writes a segment per batch, and one per root would make a sweep of a
// large library slow.
const maxBatch = 1000

// textIndexVersion names what the index holds and how; an index of
// another version is built anew.
const textIndexVersion = "1"

// maxCandidates bounds the roots a search ranks: the best of them by
// bleve's own score are ranked by the node's rules (match.go). A query
// matching more roots than that pages through those.
const maxCandidates = 1000

// OpenTextIndex opens the index under dir, or makes it anew when it is
// missing, of another version or does not open; dir "" keeps it in
// memory.
func OpenTextIndex(dir string) (*TextIndex, error) {
	if dir == "" {
		idx, err := bleve.NewMemOnly(textMapping())
		if err != nil {
			return nil, fmt.Errorf("search index: %w", err)
		}
		return &TextIndex{idx: idx}, nil
	}
	version := filepath.Join(dir, "VERSION")
	path := filepath.Join(dir, "index")
	if v, err := os.ReadFile(version); err == nil && strings.TrimSpace(string(v)) == textIndexVersion {
		if idx, err := bleve.Open(path); err == nil {
			return &TextIndex{idx: idx}, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	idx, err := bleve.New(path, textMapping())
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if err := os.WriteFile(version, []byte(textIndexVersion+"\n"), 0o600); err != nil {
		idx.Close()
		return nil, fmt.Errorf("search index: %w", err)
	}
	return &TextIndex{idx: idx}, nil
}

// textMapping indexes the node's own tokens as they are (split at
// spaces, nothing folded again: store.Tokens folded them), with their
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
func (t *TextIndex) Close() error { return errors.Join(t.Flush(), t.idx.Close()) }

// Put indexes what the indexer read of root: its search text, its sort
// key made of its summary; a root gone, or without text (a sidecar),
// leaves the index. Puts are written in batches: searches see them after
// Flush (or once maxBatch of them gathered).
func (t *TextIndex) Put(root store.RootID, in store.Indexed) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.batch == nil {
		t.batch = t.idx.NewBatch()
	}
	if !in.Exists || (len(in.Text.Title) == 0 && len(in.Text.Other) == 0) {
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

func (t *TextIndex) flushLocked() error {
	if t.batch == nil || t.batch.Size() == 0 {
		return nil
	}
	b := t.batch
	t.batch = nil
	return t.idx.Batch(b)
}

// Compact merges the index's segments into one: bleve writes a segment
// a batch and merges them as it goes, but after a sweep that put a whole
// library a query still reads several, and its cost grows with them.
// It returns once the merge is done.
func (t *TextIndex) Compact(ctx context.Context) error {
	adv, err := t.idx.Advanced()
	if err != nil {
		return err
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	// A merge takes at most ten segments at a time: again while that
	// leaves more than one, and it helps.
	for n := t.Segments(); n > 1; {
		if err := sc.ForceMerge(ctx, nil); err != nil {
			return err
		}
		m := t.Segments()
		if m >= n {
			break
		}
		n = m
	}
	return nil
}

// Segments is how many segments a query reads now.
func (t *TextIndex) Segments() int {
	adv, err := t.idx.Advanced()
	if err != nil {
		return 0
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return 0
	}
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
	n, err := t.idx.DocCount()
	if err != nil {
		return err
	}
	var gone []string
	for from := 0; from < int(n); from += 10_000 {
		res, err := t.idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 10_000, from, false))
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
	b := t.idx.NewBatch()
	for _, id := range gone {
		b.Delete(id)
		t.keys.Delete(store.RootID(id))
	}
	return t.idx.Batch(b)
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
	res, err := t.idx.Search(req)
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
