package testnet

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/metrics"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
)

// The learner benchmark's network and sample.
const (
	learnPeers   = 20 // households already there
	learnFiles   = 40 // files the household that joins holds
	learnHolders = 3  // households holding each of those files, with an NFO
)

// BenchmarkLearner measures what the learner (--learn-from-peers) costs
// a household, one run (-benchtime 1x; b.N is not used). 20 households
// on loopback (a chain plus a link from each to a random earlier one)
// hold 40 files, each on 3 of them with an NFO; then two households
// join holding the same 40 files under names of no use and no NFO: L
// learns, Q (--learn-from-peers=false, the baseline) does not. Both
// announce the same files on the same network, so what L's streams
// carried beyond Q's, DHT and record protocol, is what asking cost. It
// prints the cost of one file asked (DHT messages and record requests,
// bytes) and, from it, an hour of a 10,000-file library among 20 peers
// at the learner's pace: the first pass (20 files a minute at idle) and
// then (each file asked again after a week).
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
	b.StopTimer()
	st := c.Nodes[learner].Node.LearnStats()
	dht := libp2pproto.ID("/metamesh/kad/1.0.0")
	rec := libp2pproto.ID(protocol.RecordProtocolV11)
	lw, qw := wires[learner], wires[quiet]
	asked := float64(st.Asked)
	dhtMsgs := float64(lw.written(dht)-qw.written(dht)) / asked
	dhtBytes := float64(lw.protocol(dht)-qw.protocol(dht)) / asked
	recBytes := float64(lw.protocol(rec)) / asked
	perAsk := dhtBytes + recBytes
	requests := float64(st.Requests) / asked
	b.ReportMetric(dhtMsgs, "dht-msgs/file")
	b.ReportMetric(requests, "records/file")
	b.ReportMetric(perAsk, "B/file")
	b.ReportMetric(float64(lw.total())/float64(qw.total()), "x-baseline-bytes")
	const library, firstPassPerHour, weekHours = 10_000, 20 * 60, 7 * 24
	steady := float64(library) / weekHours
	fmt.Printf("%d files asked in %s, %d answered; %d record requests\n", st.Asked, took.Round(time.Millisecond), st.Answered, st.Requests)
	fmt.Printf("a file asked: %.0f DHT messages sent beyond the baseline's, %.1f record requests, %.1f KB (DHT %.1f KB, records %.1f KB)\n",
		dhtMsgs, requests, perAsk/1e3, dhtBytes/1e3, recBytes/1e3)
	fmt.Printf("all of L's stream bytes: %.2f MB, %.2f x the baseline household's (%.2f MB)\n", float64(lw.total())/1e6, float64(lw.total())/float64(qw.total()), float64(qw.total())/1e6)
	fmt.Printf("10,000 files, 20 peers: first pass (%d files an hour, %.1f hours): %.0f DHT messages, %.0f record requests, %.1f MB an hour; then (%.0f files an hour): %.0f messages, %.0f requests, %.2f MB an hour\n",
		firstPassPerHour, float64(library)/firstPassPerHour, dhtMsgs*firstPassPerHour, requests*firstPassPerHour, perAsk*firstPassPerHour/1e6,
		steady, dhtMsgs*steady, requests*steady, perAsk*steady/1e6)
}
