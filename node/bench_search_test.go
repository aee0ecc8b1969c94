package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
)

// BenchmarkSearchHTTP times GET /api/search on a running node holding 1k
// and then 100k roots, one run each (-benchtime 1x): p50 and p99 of 2,000
// one-word and 2,000 three-word queries from one keep-alive client, and
// the 100k / 1k ratio of each. Every title holds three words and each
// word is in 10 roots whatever the library's size, so a query matches as
// many roots at 1k as at 100k: the ratio shows what the library's size
// costs a search, not what its matches cost. The node's own indexer
// (keyspace notifications) indexes the roots, as it does for files it
// ingests.
func BenchmarkSearchHTTP(b *testing.B) {
	sizes := []int{1_000, 100_000}
	nodes := make([]*searchNode, len(sizes))
	for i, n := range sizes {
		nodes[i] = newSearchNode(b, n)
	}
	kinds := []struct {
		name string
		q    func(sn *searchNode, i int) string
	}{
		{"1 word", func(sn *searchNode, i int) string { a, _, _ := sn.words(i); return a }},
		{"3 words", func(sn *searchNode, i int) string { a, bb, c := sn.words(i); return a + " " + bb + " " + c }},
	}
	// The two libraries are asked in turn, so whatever else the machine
	// does at a moment weighs on both alike.
	lat := make([][][]time.Duration, len(kinds))
	for k, kind := range kinds {
		lat[k] = make([][]time.Duration, len(nodes))
		for i := range 2000 {
			for j, sn := range nodes {
				q := kind.q(sn, i*37%sn.n)
				t0 := time.Now()
				got := sn.hits(q)
				lat[k][j] = append(lat[k][j], time.Since(t0))
				if got == 0 {
					b.Fatalf("%q: no hits", q)
				}
			}
		}
	}
	fmt.Printf("\nGET /api/search, one keep-alive client, 2,000 queries of each kind per library:\n")
	fmt.Printf("  %-9s %-9s %-12s %-12s\n", "query", "roots", "p50", "p99")
	for k, kind := range kinds {
		var p [2][2]time.Duration
		for j, sn := range nodes {
			ds := lat[k][j]
			slices.Sort(ds)
			p[j] = [2]time.Duration{ds[len(ds)/2], ds[len(ds)*99/100]}
			fmt.Printf("  %-9s %-9d %-12s %-12s\n", kind.name, sn.n, p[j][0].Round(time.Microsecond), p[j][1].Round(time.Microsecond))
		}
		r50, r99 := float64(p[1][0])/float64(p[0][0]), float64(p[1][1])/float64(p[0][1])
		fmt.Printf("  %-9s 100k/1k   %-12.2f %-12.2f (goal <= 1.5)\n", kind.name, r50, r99)
		b.ReportMetric(r50, strings.ReplaceAll(kind.name, " ", "")+"-p50-100k/1k")
		b.ReportMetric(r99, strings.ReplaceAll(kind.name, " ", "")+"-p99-100k/1k")
	}
	fmt.Println()
}

// searchNode is a running node holding n roots whose titles are three
// words each.
type searchNode struct {
	n    int
	hits func(q string) int
}

// words are the three title words of the i-th root: each word is in 10
// roots.
func (sn *searchNode) words(i int) (string, string, string) {
	v := sn.n / 10
	return fmt.Sprintf("alpha%d", i%v), fmt.Sprintf("beta%d", (i*7+1)%v), fmt.Sprintf("gamma%d", (i*13+2)%v)
}

// newSearchNode starts a node, loads n roots and waits until its indexer
// has them all.
func newSearchNode(b *testing.B, n int) *searchNode {
	nd, srv, lib := benchNode(b)
	ctx := context.Background()
	sn := &searchNode{n: n}
	st := nd.Store()
	var batch []store.IngestItem
	for i := range n {
		a, bb, c := sn.words(i)
		batch = append(batch, store.IngestItem{
			File:   store.FileStat{Path: fmt.Sprintf("%s/d%03d/%07d.mkv", lib, i%500, i), Size: int64(4096 + i), MtimeNs: 1},
			Hashes: benchHashes(i),
			Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": a + " " + bb + " " + c, "movieYear": "2001", "fileType": "video"}},
		})
		if len(batch) == 64 || i == n-1 {
			if _, err := st.IngestBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	base := "http://" + nd.APIAddr() + "/api/search?q="
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	sn.hits = func(q string) int {
		resp, err := client.Get(base + url.QueryEscape(q))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /api/search?q=%s: %s", q, resp.Status)
		}
		var body struct {
			Hits []json.RawMessage `json:"hits"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			b.Fatal(err)
		}
		return len(body.Hits)
	}
	// The indexer follows the writes: wait until the last root is found.
	last, _, _ := sn.words(n - 1)
	waiting.Until(b, fmt.Sprintf("the search index of %d roots to catch up", n), func() string {
		if got := sn.hits(last); got < 10 {
			return fmt.Sprintf("%d hits for the last root, want 10", got)
		}
		return ""
	}, waiting.Limit(5*time.Minute), waiting.Every(50*time.Millisecond))
	waitQuiet(b, srv.Addr())
	return sn
}
