package testnet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/metrics"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
)

// The learner benchmark's network and sample.
const (
	learnPeers   = 20 // households already there
	learnFiles   = 40 // files the household that joins holds
	learnHolders = 3  // households holding each of those files, with an NFO
	// learnWalkCount is how many providers the learner's walk asks the
	// DHT for (the learner's 8, and itself): with fewer providers, the
	// walk runs to its end.
	learnWalkCount = 9
)

// BenchmarkLearner measures what the learner (--learn-from-peers) costs
// a household, one run (-benchtime 1x; b.N is not used). 20 households
// on loopback (a chain plus a link from each to a random earlier one)
// hold 40 files, each on 3 of them with an NFO; then two households
// join holding the same 40 files under names of no use and no NFO: L
// learns, Q (--learn-from-peers=false) does not. A file asked is one
// DHT walk for its providers (measured on Q, kad-dht's walk for as many
// providers, its DHT stream writes and bytes counted around it) and
// the record requests L sent (counted, and the record protocol's bytes
// on L's streams); the baseline is a user's cold lookup on Q (GET
// /api/meta of a file Q never saw), in the same run. It prints the cost
// of one file asked and, from it, an hour of a 10,000-file library among
// 20 peers at the learner's pace: the first pass (20 files a minute at
// idle) and then (each file asked again after a week).
func BenchmarkLearner(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 43))
	wires := make([]*wireCounter, learnPeers+2)
	for i := range wires {
		wires[i] = newWireCounter()
	}
	learner, quiet := learnPeers, learnPeers+1
	c := New(b, learnPeers, Options{
		ReprovideInterval: 24 * time.Hour,
		LookupTimeout:     10 * time.Second,
		Reporter:          func(i int) metrics.Reporter { return wires[i] },
		Configure: func(_ *Cluster, i int, cfg *node.Config) {
			// Only L asks: the others' questions would cross L's counts.
			cfg.NoLearning = i != learner
			cfg.LearnIdleInterval, cfg.LearnInterval = 200*time.Millisecond, 200*time.Millisecond
		},
	})
	c.Chain()
	for i := 2; i < learnPeers; i++ {
		c.Connect(i, rng.IntN(i-1))
	}
	c.WaitFor("the DHT to settle", 2*time.Minute, func() bool {
		for _, m := range c.Nodes {
			if peersOf(m) < learnPeers/2 {
				return false
			}
		}
		return true
	})
	blobs := make([][]byte, learnFiles)
	holders := make([]int, learnPeers)
	for f := range blobs {
		blobs[f] = randBytes(b, 48<<10)
		for _, i := range rng.Perm(learnPeers)[:learnHolders] {
			c.AddFile(i, fmt.Sprintf("film%02d/film.mkv", f), blobs[f])
			c.AddFile(i, fmt.Sprintf("film%02d/film.nfo", f), fmt.Appendf(nil, "<movie><title>Film number %d</title><plot>Plot %d.</plot><uniqueid type=\"imdb\">tt%07d</uniqueid></movie>", f, f, f))
			holders[i]++
		}
	}
	for i, n := range holders {
		c.WaitFor(fmt.Sprintf("node %d to announce", i), 3*time.Minute, func() bool {
			s := c.Nodes[i].Node.ProvideStats()
			return s.Announced >= n && s.Queued == 0
		})
	}
	for _, j := range []int{learner, quiet} {
		c.Prepare()
		for f, data := range blobs {
			c.AddFile(j, fmt.Sprintf("x%02d.mkv", f), data)
		}
		c.Join(rng.IntN(learnPeers), rng.IntN(learnPeers))
	}
	b.ResetTimer()
	start := time.Now()
	c.WaitFor("L to ask about every file", 5*time.Minute, func() bool {
		return c.Nodes[learner].Node.LearnStats().Asked >= learnFiles
	})
	took := time.Since(start)
	for _, j := range []int{learner, quiet} {
		c.WaitFor("L and Q to announce", 3*time.Minute, func() bool {
			s := c.Nodes[j].Node.ProvideStats()
			return s.Announced >= learnFiles && s.Queued == 0
		})
	}
	time.Sleep(time.Second) // the last answers' bytes
	// The walks: Q (which holds the files too, announced) runs the
	// learner's walk for each file, kad-dht's FindProviders for as many
	// providers, its DHT streams counted around it. The baseline: a cold
	// lookup a user makes (GET /api/meta of a file Q never saw: the walk,
	// the record, verify, merge), of files only the others hold.
	dht := libp2pproto.ID("/metamesh/kad/1.0.0")
	rec := libp2pproto.ID(protocol.RecordProtocolV11)
	qw, lw := wires[quiet], wires[learner]
	q := c.Nodes[quiet]
	var walkMsgs, walkBytes int64
	for _, data := range blobs {
		h := canonicalOfBytes(b, data)
		m0, b0 := qw.written(dht), qw.protocol(dht)
		if _, err := q.Node.FindProviders(context.Background(), h, learnWalkCount); err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		walkMsgs += qw.written(dht) - m0
		walkBytes += qw.protocol(dht) - b0
	}
	var lookupBytes int64
	for f := range learnHolders {
		data := randBytes(b, 48<<10)
		i := rng.IntN(learnPeers)
		c.AddFile(i, fmt.Sprintf("other%d.mkv", f), data)
		h := canonicalOfBytes(b, data)
		c.WaitFor("the other file announced", 2*time.Minute, func() bool {
			ps, _ := q.Node.FindProviders(context.Background(), h, 1)
			return len(ps) > 0
		})
		t0 := qw.total()
		if code, _ := q.Get("/api/meta/" + h); code != 200 {
			b.Fatalf("a cold lookup of %s: %d", h, code)
		}
		time.Sleep(100 * time.Millisecond)
		lookupBytes += qw.total() - t0
	}
	b.StopTimer()
	st := c.Nodes[learner].Node.LearnStats()
	asked := float64(st.Asked)
	dhtMsgs := float64(walkMsgs) / float64(len(blobs))
	dhtBytes := float64(walkBytes) / float64(len(blobs))
	recBytes := float64(lw.protocol(rec)) / asked
	perAsk := dhtBytes + recBytes
	lookup := float64(lookupBytes) / learnHolders
	requests := float64(st.Requests) / asked
	b.ReportMetric(dhtMsgs, "dht-msgs/file")
	b.ReportMetric(requests, "records/file")
	b.ReportMetric(perAsk, "B/file")
	b.ReportMetric(perAsk/lookup, "x-cold-lookup")
	const library, firstPassPerHour, weekHours = 10_000, 20 * 60, 7 * 24
	steady := float64(library) / weekHours
	fmt.Printf("%d files asked in %s, %d answered; %d record requests\n", st.Asked, took.Round(time.Millisecond), st.Answered, st.Requests)
	fmt.Printf("a file asked: a walk of %.1f DHT messages (%.1f KB), %.1f record requests (%.1f KB): %.1f KB, %.2f x a user's cold lookup (%.1f KB)\n",
		dhtMsgs, dhtBytes/1e3, requests, recBytes/1e3, perAsk/1e3, perAsk/lookup, lookup/1e3)
	fmt.Printf("10,000 files, 20 peers: first pass (%d files an hour, %.1f hours): %.0f DHT messages, %.0f record requests, %.1f MB an hour; then (%.0f files an hour): %.0f messages, %.0f requests, %.2f MB an hour\n",
		firstPassPerHour, float64(library)/firstPassPerHour, dhtMsgs*firstPassPerHour, requests*firstPassPerHour, perAsk*firstPassPerHour/1e6,
		steady, dhtMsgs*steady, requests*steady, perAsk*steady/1e6)
}

// canonicalOfBytes is data's canonical CID.
func canonicalOfBytes(b *testing.B, data []byte) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return h.Canonical
}
