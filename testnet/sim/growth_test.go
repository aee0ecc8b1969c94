package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/protocol"
)

// The titles the early households hold: commonTitle by several (each its
// own file), rareTitle by one.
const (
	commonTitle = "Common Title"
	rareTitle   = "Forgotten Harbour Chronicles"
)

// growthPlan is a federation that grows one household at a time.
type growthPlan struct {
	// Holders hold a file titled commonTitle each, spread over the
	// first fifth of the joins; one more early household holds
	// rareTitle.
	Holders int
	// Searches of each title at a measurement point.
	Searches int
}

// grower grows a simulated federation one household at a time, each
// connected to the household that joined just before it and to one
// earlier household drawn at random (degree 2), and measures the reach
// of what the early holders hold from households that hold nothing.
type grower struct {
	tb   testing.TB
	ctx  context.Context
	n    *Network
	plan growthPlan

	roles  map[int]string // join index → the title that household holds
	common []*Member
	rare   *Member
	skip   map[*Member]bool // asked from by no measurement (the probe)
	// changed is when the federation last changed (a join, leaves,
	// returns).
	changed time.Time
	// firstProvide are the provider's messages of each holder's first
	// provide of its keys.
	firstProvide []int64
}

func newGrower(tb testing.TB, n *Network, households int, plan growthPlan) *grower {
	g := &grower{tb: tb, ctx: context.Background(), n: n, plan: plan,
		roles: map[int]string{}, skip: map[*Member]bool{}}
	common, rare := holderPlaces(households, plan.Holders)
	for _, i := range common {
		g.roles[i] = commonTitle
	}
	g.roles[rare] = rareTitle
	return g
}

// holderPlaces spreads holders households over the first fifth of n
// joins (never the first, which has no one to provide to), and puts the
// rare title on the earliest join left after the first two.
func holderPlaces(n, holders int) (common []int, rare int) {
	span := max(n/5, holders+1)
	taken := map[int]bool{}
	for k := range holders {
		i := 1 + k*span/holders
		common = append(common, i)
		taken[i] = true
	}
	for rare = 2; taken[rare]; rare++ {
	}
	return common, rare
}

// joinNext adds one household, connected to the last one and one earlier
// one drawn at random; a holder's keys are all provided before it
// returns.
func (g *grower) joinNext() *Member {
	g.tb.Helper()
	live := g.n.Live()
	var connect []*Member
	if k := len(live); k > 0 {
		connect = append(connect, live[k-1])
		if k > 1 {
			connect = append(connect, live[g.n.Intn(k-1)])
		}
	}
	m, err := g.n.JoinWith(g.ctx, JoinOptions{Connect: connect})
	if err != nil {
		g.tb.Fatalf("household %d: %v", len(live), err)
	}
	g.changed = time.Now()
	title, ok := g.roles[m.Index]
	if !ok {
		return m
	}
	if _, err := g.n.AddFiles(g.ctx, m, 1, func(int) string { return title }); err != nil {
		g.tb.Fatal(err)
	}
	g.waitProvided(m)
	g.firstProvide = append(g.firstProvide, m.HH.ProvideStats().Messages)
	if title == rareTitle {
		g.rare = m
	} else {
		g.common = append(g.common, m)
	}
	return m
}

// wantKeys are the keys m provides: its files' CIDs and the distinct
// keyed words of their titles.
func wantKeys(m *Member) int64 {
	words := map[string]bool{}
	for _, t := range m.Titles {
		for _, w := range protocol.KeyedTokens(protocol.Tokens(t)) {
			words[w] = true
		}
	}
	return int64(len(m.CIDs) + len(words))
}

// waitProvided waits until every key of m is in its provider's keystore
// and provided.
func (g *grower) waitProvided(m *Member) {
	g.tb.Helper()
	want := wantKeys(m)
	waiting.For(g.tb, fmt.Sprintf("household %d's %d keys provided", m.Index, want), func() bool {
		st := m.HH.ProvideStats()
		return st.Keys == want && st.Queued == 0 && st.Provided >= st.Keys
	})
}

// holders are the live households that hold a title.
func (g *grower) holders() (common []*Member, rare *Member) {
	for _, m := range g.common {
		if m.Alive {
			common = append(common, m)
		}
	}
	if g.rare != nil && g.rare.Alive {
		rare = g.rare
	}
	return common, rare
}

// reachPoint is one measurement of reach.
type reachPoint struct {
	households int
	since      time.Duration // since the federation last changed
	// lookups of each live holder's CID (Household.Lookup) and those
	// answered with the holder as source; records: provider searches of
	// the same CIDs on the DHT alone (findable) and those that named
	// the holder. lookupMissed and recordsMissed are the join indices of
	// the holders not found.
	lookups, lookupsOK          int
	records, recordsOK          int
	lookupMissed, recordsMissed []int
	// lookupWhy says, for each lookup that missed, how long it took and
	// what it ended with (the error, or who answered instead).
	lookupWhy []string
	// commonSearches of commonTitle and the mean share of its live
	// holders each found; rareSearches of rareTitle (none while its
	// holder is away) and how many found it; fromIndex is the mean of
	// the households the keyword index named a search.
	commonSearches, commonHolders int
	commonShare                   float64
	rareSearches, rareFound       int
	fromIndex                     float64
	// lookupP95 and searchP95 are over every lookup and search, answered
	// or not (a lookup that finds nothing ends at the lookup timeout).
	lookupP95, searchP95 time.Duration
	// failed are lookups and searches that ended in an error other than
	// not found.
	failed int
	took   time.Duration
}

func (p reachPoint) String() string {
	rare := "rare title's holder away"
	if p.rareSearches > 0 {
		rare = fmt.Sprintf("rare title found by %d/%d", p.rareFound, p.rareSearches)
	}
	s := fmt.Sprintf("N=%d, %s since the last change: lookup reach %d/%d (%.0f%%), DHT provider records %d/%d; search %q %.0f%% of %d holders (%d searches, %.1f households named by the index), %s; p95 lookup %s, search %s",
		p.households, p.since.Round(time.Second), p.lookupsOK, p.lookups, percent(p.lookupsOK, p.lookups), p.recordsOK, p.records,
		strings.ToLower(commonTitle), 100*p.commonShare, p.commonHolders, p.commonSearches, p.fromIndex, rare,
		p.lookupP95.Round(time.Millisecond), p.searchP95.Round(time.Millisecond))
	if len(p.lookupMissed)+len(p.recordsMissed) > 0 {
		slices.Sort(p.lookupMissed)
		slices.Sort(p.recordsMissed)
		s += fmt.Sprintf("; holders (join index) not found: lookup %v, records %v", p.lookupMissed, p.recordsMissed)
	}
	for _, w := range p.lookupWhy {
		s += "; " + w
	}
	if p.failed > 0 {
		s += fmt.Sprintf("; %d failed with another error than not found", p.failed)
	}
	return s + fmt.Sprintf(" (measured in %s)", p.took.Round(time.Second))
}

// missWhy says why a lookup of holder h's CID missed, after d: the
// error it ended with, or the household that answered in h's place.
func (g *grower) missWhy(h *Member, doc api.Document, err error, d time.Duration) string {
	why := fmt.Sprintf("lookup of holder %d missed after %s: ", h.Index, d.Round(time.Millisecond))
	if err != nil {
		return why + err.Error()
	}
	for _, m := range g.n.Members {
		if m.ID.String() == doc.Source {
			return why + fmt.Sprintf("answered by household %d", m.Index)
		}
	}
	return why + fmt.Sprintf("answered by %q", doc.Source)
}

func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// measure asks from live households that hold nothing, each asking one
// thing at a time: first, 8 at once, a lookup of every live holder's CID
// and, from another household, the DHT's provider records of it; then,
// one at a time, Searches searches of each title (a search walks the
// DHT for each of its words and asks some 40 households: eight at once
// on the simulation's cores measured the simulator, each search in the
// federation runs on its own household's machine). After each of the
// two, the askers
// forget what they asked: the connections the asking opened are closed
// and the records a lookup brought are deleted from the asker's store
// (a household keeps both, and would then find a holder by its
// connection or answer from its store). What the asking taught the DHT's
// routing tables stays, as it would.
func (g *grower) measure() reachPoint {
	g.tb.Helper()
	start := time.Now()
	common, rare := g.holders()
	live := g.n.Live()
	p := reachPoint{households: len(live), since: start.Sub(g.changed), commonHolders: len(common)}
	var askers []*Member
	for _, m := range live {
		if _, holds := g.roles[m.Index]; !holds && !g.skip[m] {
			askers = append(askers, m)
		}
	}
	if len(askers) == 0 {
		return p
	}
	// Askers in a random order, each asking once as far as they go.
	g.n.mu.Lock()
	g.n.rng.Shuffle(len(askers), func(i, j int) { askers[i], askers[j] = askers[j], askers[i] })
	g.n.mu.Unlock()
	next := 0
	asker := func() *Member {
		m := askers[next%len(askers)]
		next++
		return m
	}
	var mu sync.Mutex
	var lookLat, searchLat []time.Duration
	var jobs []func()
	looked := map[*Member][]string{}
	for _, h := range append(slices.Clone(common), rare) {
		if h == nil {
			continue
		}
		c := h.CIDs[0]
		from, other := asker(), asker()
		looked[from] = append(looked[from], c)
		jobs = append(jobs, func() {
			t := time.Now()
			doc, err := from.HH.Lookup(g.ctx, c)
			d := time.Since(t)
			mu.Lock()
			defer mu.Unlock()
			p.lookups++
			lookLat = append(lookLat, d)
			switch {
			case err == nil && doc.Source == h.ID.String():
				p.lookupsOK++
				return
			case err != nil && !errors.Is(err, api.ErrNotFound):
				p.failed++
			}
			p.lookupMissed = append(p.lookupMissed, h.Index)
			p.lookupWhy = append(p.lookupWhy, g.missWhy(h, doc, err, d))
		}, func() {
			ok := findable(g.ctx, other, h, c)
			mu.Lock()
			defer mu.Unlock()
			p.records++
			if ok {
				p.recordsOK++
			} else {
				p.recordsMissed = append(p.recordsMissed, h.Index)
			}
		})
	}
	g.ask(askers, jobs, looked, 8)

	search := func(from *Member, title string, want []*Member) {
		t := time.Now()
		res, err := from.HH.Search(g.ctx, strings.ToLower(title), 50)
		d := time.Since(t)
		mu.Lock()
		defer mu.Unlock()
		searchLat = append(searchLat, d)
		if err != nil {
			p.failed++
			return
		}
		got := holdersFound(res, from, want)
		if title == rareTitle {
			p.rareSearches++
			p.rareFound += got
			return
		}
		p.commonSearches++
		p.commonShare += float64(got) / float64(len(want))
		p.fromIndex += float64(res.FromIndex)
	}
	jobs, next = nil, 0
	for range g.plan.Searches {
		if len(common) > 0 {
			from := asker()
			jobs = append(jobs, func() { search(from, commonTitle, common) })
		}
		if rare != nil {
			from := asker()
			jobs = append(jobs, func() { search(from, rareTitle, []*Member{rare}) })
		}
	}
	g.ask(askers, jobs, nil, 1)

	if p.commonSearches > 0 {
		p.commonShare /= float64(p.commonSearches)
		p.fromIndex /= float64(p.commonSearches)
	}
	slices.Sort(lookLat)
	slices.Sort(searchLat)
	p.lookupP95, p.searchP95 = percentile(lookLat, 0.95), percentile(searchLat, 0.95)
	p.took = time.Since(start)
	return p
}

// ask runs jobs, width at once, then makes askers forget them: every
// connection an asker opened meanwhile is closed, and the records of the
// CIDs looked[asker] up that its store now keeps from peers are deleted.
func (g *grower) ask(askers []*Member, jobs []func(), looked map[*Member][]string, width int) {
	g.tb.Helper()
	before := map[*Member]map[peer.ID]bool{}
	for _, m := range askers {
		before[m] = map[peer.ID]bool{}
		for _, p := range m.Host.Network().Peers() {
			before[m][p] = true
		}
	}
	runJobs(jobs, width)
	for _, m := range askers {
		for _, p := range m.Host.Network().Peers() {
			if !before[m][p] {
				_ = m.Host.Network().ClosePeer(p)
			}
		}
		for _, c := range looked[m] {
			doc, err := m.Store.DocumentByCID(g.ctx, c)
			if err != nil || doc.Local() {
				continue
			}
			if err := m.Store.DeleteRoot(g.ctx, doc.Root); err != nil {
				g.tb.Fatalf("household %d: forget %s: %v", m.Index, c, err)
			}
		}
	}
}

// runJobs runs jobs, at most width at once.
func runJobs(jobs []func(), width int) {
	ch := make(chan func())
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				j()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// dhtHealth says how the live households' DHTs stand: the sizes of their
// routing tables, and how many are not DHT servers.
func dhtHealth(n *Network) string {
	var sizes []int
	clients := 0
	for _, m := range n.Live() {
		d := m.HH.DHT()
		sizes = append(sizes, d.RoutingTable().Size())
		if d.Mode() != dht.ModeServer {
			clients++
		}
	}
	slices.Sort(sizes)
	if len(sizes) == 0 {
		return "no household runs"
	}
	at := func(p float64) int { return sizes[min(len(sizes)-1, int(float64(len(sizes))*p))] }
	empty := 0
	for _, s := range sizes {
		if s == 0 {
			empty++
		}
	}
	return fmt.Sprintf("routing tables of the %d households: min %d, p5 %d, p50 %d, max %d peers; %d empty; %d not DHT servers",
		len(sizes), sizes[0], at(0.05), at(0.5), sizes[len(sizes)-1], empty, clients)
}

// traffic sums the DHT messages the households send over the time it
// runs, and the household-seconds they ran: tick after every change of
// the live households, pause it while reach is measured.
type traffic struct {
	n       *Network
	running bool
	last    time.Time
	live    int
	seen    map[*Member]sent
	// dht are every DHT message, provider the sweeping provider's
	// (ProvideStats.Messages), streams those of other protocols opened;
	// seconds are household-seconds.
	dht, provider int64
	streams       map[string]int64
	seconds       float64
}

// sent are one household's counters at a tick.
type sent struct {
	hh            *federation.Household
	dht, provider int64
	streams       map[string]int64
}

func newTraffic(n *Network) *traffic {
	t := &traffic{n: n, seen: map[*Member]sent{}, streams: map[string]int64{}}
	t.resume()
	return t
}

// tick adds what was sent since the last tick.
func (t *traffic) tick() {
	now := time.Now()
	live := t.n.Live()
	if t.running {
		t.seconds += float64(t.live) * now.Sub(t.last).Seconds()
	}
	for _, m := range live {
		s := sent{hh: m.HH, dht: m.DHTMessages(), provider: m.HH.ProvideStats().Messages, streams: m.Streams()}
		was := t.seen[m] // the zero sent when first seen
		if t.running {
			t.dht += s.dht - was.dht
			if was.hh == s.hh {
				t.provider += s.provider - was.provider
			} else {
				t.provider += s.provider // a run since
			}
			for p, k := range s.streams {
				t.streams[p] += k - was.streams[p]
			}
		}
		t.seen[m] = s
	}
	t.last, t.live = now, len(live)
}

func (t *traffic) pause() {
	t.tick()
	t.running = false
}

func (t *traffic) resume() {
	t.tick()
	t.running = true
}

// perHour are the DHT messages and the provider's of one household in an
// hour.
func (t *traffic) perHour() (dht, provider float64) {
	h := t.seconds / 3600
	if h == 0 {
		return 0, 0
	}
	return float64(t.dht) / h, float64(t.provider) / h
}

func (t *traffic) String() string {
	d, p := t.perHour()
	s := fmt.Sprintf("%.1f DHT messages per household per hour, %.2f of them the provider's (%d messages over %.2f household-hours)",
		d, p, t.dht, t.seconds/3600)
	var other []string
	for _, p := range slices.Sorted(maps.Keys(t.streams)) {
		if k := t.streams[p]; k > 0 {
			other = append(other, fmt.Sprintf("%s %.2f", p, float64(k)/(t.seconds/3600)))
		}
	}
	if len(other) > 0 {
		s += "; streams of other protocols per household per hour: " + strings.Join(other, ", ")
	}
	return s
}

// A federation of 30 households grows one at a time, each connected to
// the one before it and one earlier one (degree 2), with the node's
// default reprovide interval and provider record lifetime; four early
// households hold a title (each its own file) and one a rare title, and
// each holder's keys are provided before the next household joins. At
// the end the reach of their files is measured from households that hold
// nothing, and logged: no threshold yet (the federation loses early
// records as it grows; what keeps them where lookups look is the node's).
func TestGrowth_Reach(t *testing.T) {
	const size = 30
	n, err := New(context.Background(), Options{Seed: 30, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	g := newGrower(t, n, size, growthPlan{Holders: 4, Searches: 3})
	began := time.Now()
	for range size {
		g.joinNext()
	}
	t.Logf("%d households joined in %s", size, time.Since(began).Round(time.Millisecond))
	if got := len(n.Live()); got != size {
		t.Fatalf("%d households run, want %d", got, size)
	}
	if len(g.common) != 4 || g.rare == nil {
		t.Fatalf("%d households hold the common title and rare %v, want 4 and one", len(g.common), g.rare != nil)
	}
	for _, m := range append(slices.Clone(g.common), g.rare) {
		st := m.HH.ProvideStats()
		if want := wantKeys(m); st.Keys != want || st.Provided < st.Keys || st.Queued != 0 {
			t.Errorf("household %d: %d keys, %d provided, %d queued; want %d keys all provided", m.Index, st.Keys, st.Provided, st.Queued, want)
		}
	}
	// Every household's DHT walks the federation as it bootstraps (all
	// but the first joined with peers; the first is found by the second).
	for _, m := range n.Live() {
		waiting.For(t, fmt.Sprintf("household %d's first DHT message", m.Index), func() bool { return m.DHTMessages() > 0 })
	}
	p := g.measure()
	t.Logf("reach at the end: %s", p)
	t.Log(dhtHealth(n))
	if p.lookups != 5 || p.records != 5 || p.commonSearches != 3 || p.rareSearches != 3 {
		t.Errorf("measured %d lookups, %d provider searches, %d and %d searches; want 5, 5, 3 and 3", p.lookups, p.records, p.commonSearches, p.rareSearches)
	}
}
