package search

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// sweptKeys keeps the key tokens of the roots of the last whole sweep, as
// the announcer takes them from the same batches.
type sweptKeys struct {
	mu          sync.Mutex
	sweep, last map[store.RootID][]string
}

func (k *sweptKeys) take(_ context.Context, b store.ChangeBatch) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.First {
		k.sweep = map[store.RootID][]string{}
	}
	if !b.Sweep {
		return nil
	}
	for _, c := range b.Roots {
		if toks := KeyTokens(c.Document); c.Exists && len(toks) > 0 {
			k.sweep[c.Root] = toks
		}
	}
	if b.Last {
		k.last = k.sweep
	}
	return nil
}

func (k *sweptKeys) roots() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.last)
}

// The start-up sweep puts every root in the index, a batch of puts at a
// time, the same batches hand every root's key tokens to the announcer, and leaves the index one
// segment (bleve's own merger joins small ones too; what the compaction
// after a sweep does for a large library is BenchmarkSearchIndex's):
// every root is found by its words.
func TestIndexer_SweepIndexesEveryRoot(t *testing.T) {
	s := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	const n = 3*maxBatch + 10
	var ids []store.RootID
	for start := 0; start < n; start += 500 {
		var items []store.IngestItem
		for i := start; i < min(start+500, n); i++ {
			items = append(items, store.IngestItem{
				File:   store.FileStat{Path: fmt.Sprintf("/lib/film%05d.mkv", i), Size: int64(1000 + i), MtimeNs: 1},
				Hashes: testHashes(t, i),
				Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": fmt.Sprintf("Harbour %d", i), "imdbid": fmt.Sprintf("tt%07d", i)}},
			})
		}
		res, err := s.IngestBatch(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			ids = append(ids, r.Root)
		}
	}
	text, err := OpenTextIndex(filepath.Join(t.TempDir(), "search"))
	if err != nil {
		t.Fatal(err)
	}
	keys := &sweptKeys{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ch *store.Changes
		x := NewIndexer(text, func() { ch.Sweep() }, slog.New(slog.DiscardHandler))
		ch = s.Changes(x.Consumer(), store.Consumer{Name: "the keys", Fields: KeyField, Take: keys.take})
		ch.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done; text.Close() })
	waiting.Until(t, "the sweep's key tokens", func() string {
		if got := keys.roots(); got < n {
			return fmt.Sprintf("the sweep handed on the key tokens of %d roots, want %d", got, n)
		}
		return ""
	})
	// The compaction follows the sweep's last put.
	waiting.Until(t, "the compaction after the sweep", func() string {
		if got := text.Segments(); got != 1 {
			return fmt.Sprintf("%d segments after the sweep, want 1", got)
		}
		return ""
	})
	if res, err := text.Search("harbour", 100, ""); err != nil || res.Total != min(n, maxCandidates) {
		t.Errorf("harbour: %d matches, %v; want %d", res.Total, err, min(n, maxCandidates))
	}
	for _, i := range []int{0, n / 2, n - 1} {
		res, err := text.Search(fmt.Sprintf("harbour %d", i), 10, "")
		if err != nil || len(res.Matches) == 0 || res.Matches[0].Root != ids[i] {
			t.Errorf("harbour %d: %+v, %v; want %s first", i, res.Matches, err, ids[i])
		}
	}
}

// testHashes are the digests of the i-th test file (a small file: its
// IPFS CID is its sha2-256 CID).
func testHashes(tb testing.TB, i int) store.Hashes {
	tb.Helper()
	sum := sha256.Sum256([]byte(fmt.Sprint("file ", i)))
	mid, err := protocol.MidhashCID(sum[:])
	if err != nil {
		tb.Fatal(err)
	}
	sha, err := protocol.SHA256CID(sum[:])
	if err != nil {
		tb.Fatal(err)
	}
	return store.Hashes{Midhash: mid.String(), SHA256: sha.String(), IPFS: sha.String()}
}
