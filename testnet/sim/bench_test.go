package sim

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	pb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/protocol"
)

// envInts reads a comma-separated list of integers from the environment.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		out = append(out, n)
	}
	return out
}

// percentile of sorted durations.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perCID provides keys the way the node did before the sweeping provider,
// as kad-dht's IpfsDHT.Provide does it: one DHT walk to the key's closest
// peers, then an ADD_PROVIDER to each, 4 keys at a time. It returns the
// walks and the messages (walk queries excluded: kad-dht does not count
// them; ADD_PROVIDERs only).
func perCID(ctx context.Context, m *Member, keys []string) (walks, messages int64, took time.Duration) {
	d := m.HH.DHT()
	var sent atomic.Int64
	pm, err := pb.NewProtocolMessenger(announce.CountingSender(d.MessageSender(), &sent))
	if err != nil {
		panic(err)
	}
	self := peer.AddrInfo{ID: m.ID, Addrs: m.Host.Addrs()}
	start := time.Now()
	var w atomic.Int64
	ch := make(chan string)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range ch {
				c, err := cid.Decode(k)
				if err != nil {
					continue
				}
				w.Add(1)
				pctx, cancel := context.WithTimeout(ctx, time.Minute)
				peers, err := d.GetClosestPeers(pctx, string(c.Hash()))
				if err == nil {
					for _, p := range peers {
						_ = pm.PutProviderAddrs(pctx, p, c.Hash(), self)
					}
				}
				cancel()
			}
		}()
	}
	for _, k := range keys {
		ch <- k
	}
	close(ch)
	wg.Wait()
	return w.Load(), sent.Load(), time.Since(start)
}

// hops runs the DHT's provider search for c from d alone and returns how
// many hops away the peer was whose answer came with the first provider:
// the peers d asks first are 1 hop away, the peers one of them names 1
// more. 0 when d's own provider store has it.
func hops(ctx context.Context, d *dht.IpfsDHT, c string) (int, bool) {
	id, err := cid.Decode(c)
	if err != nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ectx, events := routing.RegisterForQueryEvents(ctx)
	var mu sync.Mutex
	depth := map[peer.ID]int{}
	last := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range events {
			mu.Lock()
			switch e.Type {
			case routing.SendingQuery:
				if _, ok := depth[e.ID]; !ok {
					depth[e.ID] = 1
				}
			case routing.PeerResponse:
				at := max(depth[e.ID], 1)
				for _, r := range e.Responses {
					if _, ok := depth[r.ID]; !ok {
						depth[r.ID] = at + 1
					}
				}
				last = at
			}
			mu.Unlock()
		}
	}()
	got, found := 0, false
	for range d.FindProvidersAsync(ectx, id, 1) {
		mu.Lock()
		got, found = last, true
		mu.Unlock()
		break
	}
	cancel()
	<-done
	return got, found
}

// BenchmarkSimNetwork runs the simulated federation at the sizes of
// METAMESH_SIM_N (default 50,200,500) and prints, for each: setup time,
// memory and CPU per household, federated lookup latency (p50, p95) of a
// file one household holds, asked from random households, and the share
// of the households holding a title that a federated search from a random
// household finds (ten hold it; and one: a rare title), the searches'
// latency, and the DHT hops to a file's provider record. At the largest
// size it also measures what the search token keys cost
// (METAMESH_SIM_TOKENS=0: not): the keys a library of real names gives,
// and one reprovide cycle of two households holding those names, with
// and without token keys, in the same run; and one household
// announcing METAMESH_SIM_KEYS files (default 10000,100000) through the
// sweeping provider (walks, messages, time until a sample of its keys is
// findable from random households) against the per-CID way measured on a
// sample of the same keys in the same run (METAMESH_SIM_KEYS=0: not), and
// churn (METAMESH_SIM_CHURN=0: not): 30% of the
// households leave and as many join; the share of the remaining
// households' CIDs findable after one reprovide cycle. The reprovide
// interval is 90 s (METAMESH_SIM_INTERVAL), provider records live ten
// intervals.
func BenchmarkSimNetwork(b *testing.B) {
	sizes := envInts(b, "METAMESH_SIM_N", []int{50, 200, 500})
	keyCounts := envInts(b, "METAMESH_SIM_KEYS", []int{10000, 100000})
	report := func(format string, a ...any) { fmt.Printf("sim: "+format+"\n", a...) }
	report("machine: %d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	for _, size := range sizes {
		b.Run(fmt.Sprintf("households=%d", size), func(b *testing.B) {
			largest := size == slices.Max(sizes)
			ctx := context.Background()
			interval := 90 * time.Second
			if v := os.Getenv("METAMESH_SIM_INTERVAL"); v != "" {
				d, err := time.ParseDuration(v)
				if err != nil {
					b.Fatalf("METAMESH_SIM_INTERVAL: %v", err)
				}
				interval = d
			}
			runtime.GC()
			var m0 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0, t0 := cpuTime(), time.Now()
			n, err := New(ctx, Options{Households: size, Seed: uint64(size), Dir: b.TempDir(),
				ReprovideInterval: interval, ProviderRecordTTL: 10 * interval, LookupTimeout: 10 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer n.Close()
			setup := time.Since(t0)

			// Ten households hold a file titled alike, plus one of their own.
			holders := n.Live()[:10]
			for i, m := range holders {
				if _, err := n.AddFiles(ctx, m, 2, func(k int) string {
					if k == 0 {
						return "Common Title"
					}
					return fmt.Sprintf("Own Title %d", i)
				}); err != nil {
					b.Fatal(err)
				}
			}
			// Every key of the holders (their files' CIDs and their titles'
			// words) provided before anything is measured.
			for _, m := range holders {
				waiting.For(b, fmt.Sprintf("household %d's provides", m.Index), func() bool {
					st := m.HH.ProvideStats()
					return st.CIDKeys == 2 && st.Provided >= int64(st.CIDKeys+st.TokenKeys) && st.Queued == 0
				}, waiting.Limit(crowdProvide))
			}
			runtime.GC()
			var m1 runtime.MemStats
			runtime.ReadMemStats(&m1)
			cpuSetup := cpuTime() - cpu0
			lats := n.Latencies()
			report("N=%d: %d links, one-way latency p5 %s, p50 %s, p95 %s", size, len(lats),
				percentile(lats, 0.05).Round(time.Millisecond), percentile(lats, 0.5).Round(time.Millisecond), percentile(lats, 0.95).Round(time.Millisecond))
			report("N=%d: setup %s; heap %.1f MiB per household; CPU %s per household to start and bootstrap",
				size, setup.Round(time.Millisecond), float64(m1.HeapAlloc-m0.HeapAlloc)/float64(size)/(1<<20), (cpuSetup / time.Duration(size)).Round(time.Millisecond))

			// Federated lookups of files held by one household, from random households.
			var lat []time.Duration
			var hopsSeen []int
			failed := 0
			for k := range 40 {
				owner := holders[k%len(holders)]
				from := n.Random(owner)
				if slices.Contains(holders, from) {
					continue
				}
				start := time.Now()
				doc, err := from.HH.Lookup(ctx, owner.CIDs[1])
				if err != nil || doc.Source != owner.ID.String() {
					failed++
					continue
				}
				lat = append(lat, time.Since(start))
				if h, ok := hops(ctx, n.Random(owner).HH.DHT(), owner.CIDs[1]); ok {
					hopsSeen = append(hopsSeen, h)
				}
			}
			slices.Sort(lat)
			slices.Sort(hopsSeen)
			hp := func(p float64) int {
				if len(hopsSeen) == 0 {
					return -1
				}
				return hopsSeen[min(len(hopsSeen)-1, int(float64(len(hopsSeen))*p))]
			}
			report("N=%d: federated lookup of a file one household holds: p50 %s, p95 %s (%d lookups, %d failed); DHT hops to its provider record p50 %d, p95 %d, max %d (%d searches from other random households)",
				size, percentile(lat, 0.5).Round(time.Millisecond), percentile(lat, 0.95).Round(time.Millisecond), len(lat), failed, hp(0.5), hp(0.95), hp(1), len(hopsSeen))

			// Federated search reach, and latency: a title ten households
			// hold, and one only one household holds.
			rare := n.Live()[10]
			if _, err := n.AddFiles(ctx, rare, 1, func(int) string { return "Forgotten Harbour Chronicles" }); err != nil {
				b.Fatal(err)
			}
			waiting.For(b, "the rare title's provides", func() bool {
				st := rare.HH.ProvideStats()
				return st.CIDKeys == 1 && st.TokenKeys == 3 && st.Provided >= 4 && st.Queued == 0
			}, waiting.Limit(crowdProvide))
			var reach []float64
			var searchLat []time.Duration
			asked, fromIndex, rareFound, rareSearches := 0, 0, 0, 0
			for k := range 40 {
				from := n.Random(nil)
				q, want := "common title", holders
				if k%2 == 1 {
					from = n.Random(rare)
					q, want = "forgotten harbour chronicles", []*Member{rare}
				}
				start := time.Now()
				res, err := from.HH.Search(ctx, q, 50)
				if err != nil {
					b.Fatal(err)
				}
				searchLat = append(searchLat, time.Since(start))
				got := holdersFound(res, from, want)
				if len(want) == 1 {
					rareSearches++
					rareFound += got
					continue
				}
				reach = append(reach, float64(got)/float64(len(want)))
				asked += res.Asked
				fromIndex += res.FromIndex
			}
			slices.Sort(searchLat)
			mean := 0.0
			for _, r := range reach {
				mean += r
			}
			report("N=%d: federated search reach: %.0f%% of the 10 households holding a title found, on average over %d searches (%.1f households asked a search, %.1f of them from the index)",
				size, 100*mean/float64(len(reach)), len(reach), float64(asked)/float64(len(reach)), float64(fromIndex)/float64(len(reach)))
			report("N=%d: a title one household holds: found by %d of %d searches from random households (%.0f%%)", size, rareFound, rareSearches, 100*float64(rareFound)/float64(rareSearches))
			report("N=%d: federated search latency (both titles, %d searches): p50 %s, p95 %s", size, len(searchLat),
				percentile(searchLat, 0.5).Round(time.Millisecond), percentile(searchLat, 0.95).Round(time.Millisecond))

			if !largest {
				return
			}
			for _, L := range keyCounts {
				if L > 0 { // METAMESH_SIM_KEYS=0: no bulk announcing
					providing(b, n, L, report)
				}
			}
			if os.Getenv("METAMESH_SIM_TOKENS") != "0" {
				tokenCost(b, n, interval, report)
			}
			if os.Getenv("METAMESH_SIM_CHURN") != "0" {
				churn(b, n, holders, interval, report)
			}
		})
	}
}

// The benchmark's waits past waiting.Guard: with hundreds of households
// bootstrapping at once a few keys take minutes to be provided, and one
// household's bulk library (100,000 keys unless METAMESH_SIM_KEYS says
// otherwise) far longer.
const (
	crowdProvide = 5 * time.Minute
	bulkProvide  = 30 * time.Minute
)

// providing measures one fresh household announcing L files.
func providing(b *testing.B, n *Network, L int, report func(string, ...any)) {
	ctx := context.Background()
	m, err := n.Join(ctx)
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // its routing table fills
	before := m.HH.ProvideStats()
	start := time.Now()
	keys, err := n.AddFiles(ctx, m, L, func(k int) string { return fmt.Sprintf("Bulk %d", k) })
	if err != nil {
		b.Fatal(err)
	}
	waiting.For(b, fmt.Sprintf("%d provides", L), func() bool {
		st := m.HH.ProvideStats()
		return st.Provided-before.Provided >= int64(L) && st.Queued == 0
	}, waiting.Limit(bulkProvide))
	provided := time.Since(start)
	after := m.HH.ProvideStats()
	// A sample of the keys, each looked for from a random household until found.
	sample := keys[:min(len(keys), 50)]
	found := 0
	deadline := time.Now().Add(5 * time.Minute)
	for _, c := range sample {
		from := n.Random(m)
		for {
			if findable(ctx, from, m, c) {
				found++
				break
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	findableAfter := time.Since(start)
	walks, msgs := after.Walks-before.Walks, after.Messages-before.Messages
	// The per-CID way on a sample of the same keys, extrapolated per key.
	s := keys[len(keys)-min(len(keys), 200):]
	pw, pmsg, ptook := perCID(ctx, m, s)
	perKeyWalks, perKeyMsgs := float64(pw)/float64(len(s)), float64(pmsg)/float64(len(s))
	perKeyTime := ptook / time.Duration(len(s))
	report("L=%d: sweeping provider: %d DHT walks, %d messages, %d failed, all provided in %s; %d of a sample of %d keys findable from random households after %s; %d regions",
		L, walks, msgs, after.Failed-before.Failed, provided.Round(time.Millisecond), found, len(sample), findableAfter.Round(time.Millisecond), after.Regions)
	report("L=%d: per-CID way (measured on %d of the same keys, same run): %.2f walks and %.1f ADD_PROVIDER messages per key, %s per key 4 at a time: %.0f walks, %.0f messages, %s for all %d",
		L, len(s), perKeyWalks, perKeyMsgs, perKeyTime.Round(time.Microsecond), perKeyWalks*float64(L), perKeyMsgs*float64(L), (perKeyTime * time.Duration(L)).Round(time.Second), L)
	report("L=%d: walks, sweeping / per-CID: %.4f (%.1f%% fewer)", L, float64(walks)/(perKeyWalks*float64(L)), 100*(1-float64(walks)/(perKeyWalks*float64(L))))
	if err := n.Kill(m.Index); err != nil {
		b.Fatal(err)
	}
}

// churn: 30% of the households leave, as many join; after one reprovide
// cycle, the share of the remaining holders' CIDs findable from random
// households.
func churn(b *testing.B, n *Network, holders []*Member, interval time.Duration, report func(string, ...any)) {
	ctx := context.Background()
	live := n.Live()
	leave := live[:0:0]
	for _, m := range live {
		if len(leave) < len(live)*3/10 && n.Intn(10) < 4 {
			leave = append(leave, m)
		}
	}
	if err := n.KillAll(leave); err != nil {
		b.Fatal(err)
	}
	for range leave {
		if _, err := n.Join(ctx); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(interval + interval/10)
	total, ok := 0, 0
	for _, m := range holders {
		if !m.Alive {
			continue
		}
		for _, c := range m.CIDs {
			total++
			if findable(ctx, n.Random(m), m, c) {
				ok++
			}
		}
	}
	report("churn: %d of %d households left and as many joined; after one reprovide cycle (%s) %d of %d CIDs of the remaining holders findable (%.0f%%)",
		len(leave), len(live), interval, ok, total, 100*float64(ok)/float64(max(total, 1)))
}

// corpusTitles are the titles of the release-name tables of
// ingest/testdata/names (title and episode title of every path), as a
// library of real names would hold them.
func corpusTitles(b *testing.B) []string {
	var out []string
	for _, f := range []string{"rules.tsv", "heldout.tsv", "independent.tsv"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "names", f))
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cols := strings.Split(line, "\t")
			var title string
			if f == "independent.tsv" {
				if len(cols) > 2 {
					title = cols[2]
				}
			} else {
				for _, c := range cols {
					if v, ok := strings.CutPrefix(c, "title="); ok {
						title = v + " " + title
					}
					if v, ok := strings.CutPrefix(c, "etitle="); ok {
						title += " " + v
					}
				}
			}
			if title = strings.TrimSpace(title); title != "" {
				out = append(out, title)
			}
		}
	}
	return out
}

// distinctKeyed counts the distinct keyed tokens of titles.
func distinctKeyed(titles []string) (distinct, total int) {
	seen := map[string]bool{}
	for _, t := range titles {
		for _, tok := range protocol.KeyedTokens(protocol.Tokens(t)) {
			seen[tok] = true
			total++
		}
	}
	return len(seen), total
}

// tokenCost measures what the search token keys cost: the keys a library
// of real names gives (and, by Heaps' law fitted on the names, a
// 20,000-file library), and the DHT walks and messages of one reprovide
// cycle of two fresh households holding the same titles, one providing
// token keys and one not, in the same run.
func tokenCost(b *testing.B, n *Network, interval time.Duration, report func(string, ...any)) {
	ctx := context.Background()
	titles := corpusTitles(b)
	d, total := distinctKeyed(titles)
	// Distinct words against files on the names in a random order, at
	// an eighth, a quarter, a half and all of them; the exponent of the
	// least-squares line through their logarithms (Heaps' law).
	shuffled := slices.Clone(titles)
	rng := mrand.New(mrand.NewPCG(1, 2))
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var xs, ys []float64
	for _, part := range []int{8, 4, 2, 1} {
		k, _ := distinctKeyed(shuffled[:len(shuffled)/part])
		xs, ys = append(xs, math.Log(float64(len(shuffled)/part))), append(ys, math.Log(float64(k)))
	}
	beta := slope(xs, ys)
	at20k := float64(d) * math.Pow(20000/float64(len(titles)), beta)
	report("token keys: %d files of real names (ingest/testdata/names, every title a different film or show) give %d keyed tokens, %d distinct (%.2f a file): at most ~%.0f token keys for a 20,000-file library of titles that never repeat a word; Heaps' law fitted on them (exponent %.2f) gives ~%.0f",
		len(titles), total, d, float64(d)/float64(len(titles)), float64(d)/float64(len(titles))*20000, beta, at20k)

	with, err := n.JoinWith(ctx, JoinOptions{})
	if err != nil {
		b.Fatal(err)
	}
	without, err := n.JoinWith(ctx, JoinOptions{NoSearchIndex: true})
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // their routing tables fill
	for _, m := range []*Member{with, without} {
		if _, err := n.AddFiles(ctx, m, len(titles), func(k int) string { return titles[k] }); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range []*Member{with, without} {
		waiting.For(b, "the first provides", func() bool {
			st := m.HH.ProvideStats()
			return st.Provided >= st.Keys && st.Keys > 0 && st.Queued == 0
		}, waiting.Limit(bulkProvide))
	}
	s0, t0 := ProvideStatsPair{with.HH.ProvideStats(), without.HH.ProvideStats()}, time.Now()
	time.Sleep(interval + interval/10)
	s1 := ProvideStatsPair{with.HH.ProvideStats(), without.HH.ProvideStats()}
	took := time.Since(t0)
	for i, name := range []string{"with token keys", "without"} {
		a, z := s0[i], s1[i]
		report("one reprovide cycle (%s measured) of a household of %d files %s: %d keys (%d CIDs, %d tokens), %d DHT walks, %d messages",
			took.Round(time.Second), len(titles), name, z.Keys, z.CIDKeys, z.TokenKeys, z.Walks-a.Walks, z.Messages-a.Messages)
	}
	if err := n.KillAll([]*Member{with, without}); err != nil {
		b.Fatal(err)
	}
}

// slope is the least-squares slope of ys against xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(len(xs)), my/float64(len(ys))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	return num / den
}

// ProvideStatsPair are two households' provider statistics.
type ProvideStatsPair [2]announce.Stats
