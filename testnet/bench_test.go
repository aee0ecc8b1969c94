package testnet

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
)

// The benchmark's network and sample.
const (
	benchNodes       = 20
	benchColdPerNode = 8 // cold lookups each node asks, of files on others
	benchWarmRepeats = 5 // warm lookups of each CID resolved cold
)

// BenchmarkFederation measures federated lookups on 20 nodes on loopback,
// one run (-benchtime 1x; b.N is not used):
//
//   - cold lookup: GET /api/meta/<canonical CID> on a node that never saw
//     the file (DHT + record fetch + verify + merge + answer), against a
//     bare kad-dht FindProviders of the same CID from the same node, run
//     right before or after it (the order alternates), and the time to
//     kad-dht's first provider;
//   - warm lookup: the same GET again, answered from the store;
//   - provides per file after the initial announcing, against the count
//     if every member CID of every file were provided;
//   - bytes per lookup: every libp2p stream byte the asking node sent and
//     received (DHT, record protocol, identify, multistream negotiation;
//     not yamux, noise or TCP framing), and the record protocol alone.
//
// The network: a chain (node i dials i+1) plus, for every node from 2 on,
// one link to a random earlier node, as households that each name one or
// two peers they know; the DHT's own refresh then fills the routing
// tables. Node i holds a 48 KiB file (one chunk: IPFS CID = sha2-256
// CID), a 300 KiB file (two chunks) and, for even i, a 700 KiB file.
func BenchmarkFederation(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 20))
	wires := make([]*wireCounter, benchNodes)
	for i := range wires {
		wires[i] = newWireCounter()
	}
	c := New(b, benchNodes, Options{
		ReprovideInterval: 24 * time.Hour, // no reprovide during the run
		LookupTimeout:     10 * time.Second,
		Reporter:          func(i int) metrics.Reporter { return wires[i] },
	})
	c.Chain()
	for i := 2; i < benchNodes; i++ {
		c.Connect(i, rng.IntN(i-1))
	}
	// Every routing table fills (the announcer provides everything again
	// when its table first has a peer: files come after that, so the
	// count below is the initial announcing alone).
	c.WaitFor("the DHT to settle", 2*time.Minute, func() bool {
		for _, m := range c.Nodes {
			if peersOf(m) < benchNodes/2 {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second)
	var before int64
	for _, m := range c.Nodes {
		s := m.Node.ProvideStats()
		before += s.Provided + s.Failed
	}

	type benchFile struct {
		owner int
		h     ingest.FileHashes
	}
	var files []benchFile
	for i := 0; i < benchNodes; i++ {
		sizes := []int{48 << 10, 300 << 10}
		if i%2 == 0 {
			sizes = append(sizes, 700<<10)
		}
		for k, size := range sizes {
			p := c.AddFile(i, fmt.Sprintf("d%d/n%02d-f%d.bin", k, i, k), randBytes(b, size))
			h, err := ingest.HashFile(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, benchFile{i, h})
		}
	}
	members := 0
	for _, f := range files {
		i := f.owner
		c.WaitFor(fmt.Sprintf("node %d to ingest %s", i, f.h.Canonical), time.Minute, func() bool {
			code, _ := c.Nodes[i].Get("/api/meta/" + f.h.SHA256 + "?local=1")
			return code == 200
		})
		members += len(distinct(f.h.Midhash, f.h.SHA256, f.h.IPFS))
	}
	perNode := make([]int, benchNodes)
	for _, f := range files {
		perNode[f.owner]++
	}
	for i, n := range perNode {
		c.WaitFor(fmt.Sprintf("node %d to announce", i), 2*time.Minute, func() bool {
			s := c.Nodes[i].Node.ProvideStats()
			return s.Announced == n && s.Queued == 0 && s.Provided+s.Failed >= int64(n)
		})
	}
	var provided, failed int64
	for _, m := range c.Nodes {
		s := m.Node.ProvideStats()
		provided, failed = provided+s.Provided, failed+s.Failed
	}
	provided -= before

	// Cold samples: each node asks for benchColdPerNode files of others,
	// each pair once; the askers take turns.
	type sample struct {
		asker int
		file  benchFile
	}
	var samples []sample
	for round := 0; round < benchColdPerNode; round++ {
		for i := 0; i < benchNodes; i++ {
			samples = append(samples, sample{asker: i})
		}
	}
	picked := make([][]benchFile, benchNodes)
	for i := range picked {
		for _, j := range rng.Perm(len(files)) {
			if files[j].owner != i && len(picked[i]) < benchColdPerNode {
				picked[i] = append(picked[i], files[j])
			}
		}
	}
	for k := range samples {
		samples[k].file = picked[samples[k].asker][k/benchNodes]
	}

	var cold, bare, first, warm durations
	var coldAll, coldRecord, bareAll, warmAll counts
	coldFailed := 0
	recordProto := libp2pproto.ID(protocol.RecordProtocolID)
	for k, s := range samples {
		m, w, id := c.Nodes[s.asker], wires[s.asker], s.file.h.Canonical
		if code, _ := m.Get("/api/meta/" + id + "?local=1"); code != 404 {
			b.Fatalf("node %d already knows %s (%d): not a cold sample", s.asker, id, code)
		}
		lookup := func() {
			all, rec := w.total(), w.protocol(recordProto)
			d, code := timedGet(b, m, "/api/meta/"+id)
			quiet()
			if code != 200 {
				coldFailed++
				return
			}
			cold = append(cold, d)
			coldAll = append(coldAll, w.total()-all)
			coldRecord = append(coldRecord, w.protocol(recordProto)-rec)
		}
		findProviders := func() {
			all := w.total()
			start := time.Now()
			provs, err := m.Node.FindProviders(context.Background(), id, 0)
			d := time.Since(start)
			quiet()
			if err != nil || !slices.Contains(provs, c.Nodes[s.file.owner].PeerID) {
				b.Logf("bare FindProviders of %s from node %d: %v %v", id, s.asker, provs, err)
			}
			bare = append(bare, d)
			bareAll = append(bareAll, w.total()-all)
			start = time.Now()
			if _, err := m.Node.FindProviders(context.Background(), id, 1); err == nil {
				first = append(first, time.Since(start))
			}
			quiet()
		}
		if k%2 == 0 {
			lookup()
			findProviders()
		} else {
			findProviders()
			lookup()
		}
	}
	for _, s := range samples {
		m, w := c.Nodes[s.asker], wires[s.asker]
		for r := 0; r < benchWarmRepeats; r++ {
			all := w.total()
			d, code := timedGet(b, m, "/api/meta/"+s.file.h.Canonical)
			if code != 200 {
				continue // its cold lookup failed
			}
			warm = append(warm, d)
			warmAll = append(warmAll, w.total()-all)
		}
	}

	medRatio := cold.quantile(0.5).Seconds() / bare.quantile(0.5).Seconds()
	p95Ratio := cold.quantile(0.95).Seconds() / bare.quantile(0.95).Seconds()
	fmt.Printf("\nfederation, %d nodes on loopback (chain + one random link per node), %d files, %d cold lookups (%d failed), %d warm\n",
		benchNodes, len(files), len(cold)+coldFailed, coldFailed, len(warm))
	fmt.Printf("  %-44s %10s %10s\n", "", "median", "p95")
	fmt.Printf("  %-44s %10s %10s\n", "cold lookup, GET /api/meta/<canonical CID>", ms(cold.quantile(0.5)), ms(cold.quantile(0.95)))
	fmt.Printf("  %-44s %10s %10s\n", "bare kad-dht FindProviders (to its end)", ms(bare.quantile(0.5)), ms(bare.quantile(0.95)))
	fmt.Printf("  %-44s %10s %10s\n", "kad-dht first provider (FindProvidersAsync 1)", ms(first.quantile(0.5)), ms(first.quantile(0.95)))
	fmt.Printf("  %-44s %10.2f %10.2f  (goal <= 5)\n", "cold / FindProviders", medRatio, p95Ratio)
	fmt.Printf("  %-44s %10s %10s  (goal <= 1 ms)\n", "warm lookup, the same GET again", ms(warm.quantile(0.5)), ms(warm.quantile(0.95)))
	fmt.Printf("  %-44s %10s %10s  (mean %s)\n", "bytes per cold lookup, all streams", coldAll.quantile(0.5), coldAll.quantile(0.95), coldAll.mean())
	fmt.Printf("  %-44s %10s %10s  (mean %s)\n", "  of which /metamesh/record/1.0.0", coldRecord.quantile(0.5), coldRecord.quantile(0.95), coldRecord.mean())
	fmt.Printf("  %-44s %10s %10s  (mean %s)\n", "bytes per bare FindProviders, all streams", bareAll.quantile(0.5), bareAll.quantile(0.95), bareAll.mean())
	fmt.Printf("  %-44s %10s %10s\n", "bytes per warm lookup", warmAll.quantile(0.5), warmAll.quantile(0.95))
	fmt.Printf("  provides per file: %.2f (%d provided, %d failed, %d files); providing every member: %.2f (%d)\n\n",
		float64(provided)/float64(len(files)), provided, failed, len(files), float64(members)/float64(len(files)), members)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(medRatio, "cold/findprov-median")
	b.ReportMetric(p95Ratio, "cold/findprov-p95")
	b.ReportMetric(float64(warm.quantile(0.95).Microseconds())/1e3, "warm-p95-ms")
	b.ReportMetric(float64(provided)/float64(len(files)), "provides/file")
	b.ReportMetric(float64(coldAll.quantile(0.5)), "B/cold-lookup")
}

// peersOf is the number of peers m is connected to.
func peersOf(m *Member) int {
	_, st := m.Get("/api/status")
	n, _ := st["peers"].(float64)
	return int(n)
}

// timedGet times a GET on m's API up to the last byte of the answer.
func timedGet(tb testing.TB, m *Member, path string) (time.Duration, int) {
	tb.Helper()
	start := time.Now()
	resp, err := http.Get("http://" + m.Node.APIAddr() + path)
	if err != nil {
		tb.Fatalf("node %d GET %s: %v", m.Index, path, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("node %d GET %s: %v", m.Index, path, err)
	}
	return d, resp.StatusCode
}

// quiet lets the stragglers of an operation (a cancelled query's last
// answers) reach the counters before they are read.
func quiet() { time.Sleep(100 * time.Millisecond) }

func distinct(xs ...string) []string {
	slices.Sort(xs)
	return slices.Compact(xs)
}

type durations []time.Duration

// quantile is the nearest-rank q-quantile (0 when empty).
func (ds durations) quantile(q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1e3) }

type counts []int64

func (cs counts) quantile(q float64) byteCount {
	if len(cs) == 0 {
		return 0
	}
	s := slices.Clone(cs)
	slices.Sort(s)
	return byteCount(s[min(len(s)-1, int(q*float64(len(s))))])
}

func (cs counts) mean() byteCount {
	if len(cs) == 0 {
		return 0
	}
	var sum int64
	for _, c := range cs {
		sum += c
	}
	return byteCount(sum / int64(len(cs)))
}

type byteCount int64

func (b byteCount) String() string {
	if b < 10<<10 {
		return fmt.Sprintf("%d B", int64(b))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/1024)
}

// wireCounter is a metrics.Reporter that counts exactly and at once
// (libp2p's BandwidthCounter totals move only when its meters are swept,
// once a second): bytes written to and read from the host's streams, per
// protocol ("" while a stream's protocol is being negotiated).
type wireCounter struct {
	mu      sync.Mutex
	all     metrics.Stats
	byProto map[libp2pproto.ID]metrics.Stats
	// writes counts the writes of each protocol's streams: a message
	// each for the DHT's and the record protocol's (one write a
	// message).
	writes map[libp2pproto.ID]int64
}

func newWireCounter() *wireCounter {
	return &wireCounter{byProto: map[libp2pproto.ID]metrics.Stats{}, writes: map[libp2pproto.ID]int64{}}
}

// written is how many writes streams of p made so far.
func (w *wireCounter) written(p libp2pproto.ID) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes[p]
}

func (w *wireCounter) add(in, out int64, p libp2pproto.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.TotalIn += in
	w.all.TotalOut += out
	s := w.byProto[p]
	s.TotalIn, s.TotalOut = s.TotalIn+in, s.TotalOut+out
	w.byProto[p] = s
}

// total is every byte in and out so far.
func (w *wireCounter) total() int64 {
	s := w.GetBandwidthTotals()
	return s.TotalIn + s.TotalOut
}

// protocol is every byte in and out on streams of p so far.
func (w *wireCounter) protocol(p libp2pproto.ID) int64 {
	s := w.GetBandwidthForProtocol(p)
	return s.TotalIn + s.TotalOut
}

func (w *wireCounter) LogSentMessage(int64) {}
func (w *wireCounter) LogRecvMessage(int64) {}
func (w *wireCounter) LogSentMessageStream(n int64, p libp2pproto.ID, _ peer.ID) {
	w.add(0, n, p)
	w.mu.Lock()
	w.writes[p]++
	w.mu.Unlock()
}
func (w *wireCounter) LogRecvMessageStream(n int64, p libp2pproto.ID, _ peer.ID) {
	w.add(n, 0, p)
}
func (w *wireCounter) GetBandwidthForPeer(peer.ID) metrics.Stats { return metrics.Stats{} }
func (w *wireCounter) GetBandwidthForProtocol(p libp2pproto.ID) metrics.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byProto[p]
}
func (w *wireCounter) GetBandwidthTotals() metrics.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all
}
func (w *wireCounter) GetBandwidthByPeer() map[peer.ID]metrics.Stats {
	return map[peer.ID]metrics.Stats{}
}
func (w *wireCounter) GetBandwidthByProtocol() map[libp2pproto.ID]metrics.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[libp2pproto.ID]metrics.Stats, len(w.byProto))
	for p, s := range w.byProto {
		out[p] = s
	}
	return out
}
func (w *wireCounter) Reset()             {}
func (w *wireCounter) TrimIdle(time.Time) {}
