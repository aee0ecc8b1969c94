package sim

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/node/federation"
)

// envInt reads an integer from the environment.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envDuration reads a duration from the environment.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

// envDurations reads a comma-separated list of durations from the
// environment.
func envDurations(b *testing.B, name string, def []time.Duration) []time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []time.Duration
	for _, f := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 {
			b.Fatalf("%s=%q: want durations, comma-separated", name, v)
		}
		out = append(out, d)
	}
	return out
}

// BenchmarkSimGrowth grows a simulated federation one household at a
// time up to METAMESH_GROWTH_N households (default 500), each connected
// to the household that joined just before it and one earlier one drawn
// at random (degree 2), every household with the node's default
// reprovide interval (22 h) and provider record lifetime. Ten households
// spread over the first fifth of the joins hold a file titled "Common
// Title" each (its own CID) and one early household a rare title; each
// holder's keys are all provided before the next household joins.
//
// After every METAMESH_GROWTH_BURST joins (default 25 up to 200
// households, else 50), right after the burst, ~30 s and ~2 min after it
// (METAMESH_GROWTH_POINTS, default 0,30s,2m), it prints one line of
// reach, measured from households that hold nothing (grower.measure):
// lookups (Household.Lookup) of every holder's CID answered by that
// holder, the DHT's provider records of the same CIDs, the share of the
// holders a federated search for the common title finds, how many
// searches for the rare title find it, and the p95 latencies.
//
// Then, at N: the DHT messages the households sent per household per
// hour while the federation grew and in a quiet window after it
// (METAMESH_GROWTH_QUIET, default 10 min: kad-dht's routing-table
// refresh period), against the sweep of today's provider: one reprovide
// cycle of a household that holds a file, measured on a household joined
// with a short interval (METAMESH_GROWTH_PROBE, default 3 min) and
// divided by the 22 h of the default cycle. Last, churn: 30% of the
// households leave at once (four of the common title's holders and the
// rare title's among them), then half of them come back one by one on
// their identity, database and provider datastore (two of those holders
// and the rare one among them); reach is measured right after each
// change and at the last point after it.
func BenchmarkSimGrowth(b *testing.B) {
	size := envInt(b, "METAMESH_GROWTH_N", 500)
	burst := 50
	if size <= 200 {
		burst = 25
	}
	burst = envInt(b, "METAMESH_GROWTH_BURST", burst)
	points := envDurations(b, "METAMESH_GROWTH_POINTS", []time.Duration{0, 30 * time.Second, 2 * time.Minute})
	quiet := envDuration(b, "METAMESH_GROWTH_QUIET", 10*time.Minute)
	probe := envDuration(b, "METAMESH_GROWTH_PROBE", 3*time.Minute)
	report := func(format string, a ...any) { fmt.Printf("growth: "+format+"\n", a...) }
	report("machine: %d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	b.Run(fmt.Sprintf("households=%d", size), func(b *testing.B) {
		began := time.Now()
		n, err := New(context.Background(), Options{Seed: uint64(size), Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer n.Close()
		g := newGrower(b, n, size, growthPlan{Holders: 10, Searches: 6})
		g.grow(size, burst, points, report)
		report("N=%d: grown one household at a time in %s", size, time.Since(began).Round(time.Second))
		steady := g.quiet(quiet, report)
		g.sweep(probe, steady, report)
		g.churn(points[0], points[len(points)-1], report)
		report("N=%d: %s", len(n.Live()), dhtHealth(n))
		report("N=%d: all done in %s", size, time.Since(began).Round(time.Second))
	})
}

// grow adds households until size run, measuring reach at points after
// every burst of joins, and prints what the growth sent.
func (g *grower) grow(size, burst int, points []time.Duration, report func(string, ...any)) {
	t := newTraffic(g.n)
	for len(g.n.Live()) < size {
		for k := 0; k < burst && len(g.n.Live()) < size; k++ {
			g.joinNext()
			t.tick()
		}
		for _, at := range points {
			g.measureAt(t, at, "grow", report)
		}
	}
	t.pause()
	report("N=%d: %s", size, dhtHealth(g.n))
	report("N=%d: while growing (reach measurements left out): %s; %.0f DHT messages sent in the federation per household that joined",
		size, t, float64(t.dht)/float64(size))
	report("N=%d: first provide of a holder's keys: %s provider messages (the %d holders, in join order)", size, meanOf(g.firstProvide), len(g.firstProvide))
}

// quiet lets the federation run for d without a change, prints what it
// sent meanwhile and reach at the end, and returns that traffic.
func (g *grower) quiet(d time.Duration, report func(string, ...any)) *traffic {
	t := newTraffic(g.n)
	time.Sleep(d)
	t.pause()
	report("N=%d: steady state, %s quiet after the last join: %s", len(g.n.Live()), d, t)
	report("steady %s", g.measure())
	return t
}

// sweep measures one reprovide cycle of today's provider (probeCycle,
// interval every) and prints it per hour of the default cycle, against
// the steady state's DHT messages.
func (g *grower) sweep(every time.Duration, steady *traffic, report func(string, ...any)) {
	size := len(g.n.Live())
	c := g.probeCycle(every)
	hours := federation.DefaultReprovideInterval.Hours()
	holders := len(g.common) + 1
	report("N=%d: today's provider's sweep: one reprovide cycle of a household of %d keys (a file and its title's words), measured on a household joined with a %s interval, over %s: %d provider messages (its %d walks' queries not counted), %d DHT messages of that household in all",
		size, c.keys, every, c.took.Round(time.Second), c.provider, c.walks, c.dht)
	report("N=%d: at the default %s cycle: %.2f provider messages per hour (%.2f DHT messages, walks included) for a household that holds a file; averaged over the %d households (%d hold files): %.3f (%.3f)",
		size, federation.DefaultReprovideInterval, float64(c.provider)/hours, float64(c.dht)/hours, size, holders,
		float64(c.provider)/hours*float64(holders)/float64(size), float64(c.dht)/hours*float64(holders)/float64(size))
	d, _ := steady.perHour()
	report("N=%d: steady-state DHT messages per household per hour / today's sweep of a holding household per hour (walks included): %.1f", size, d/(float64(c.dht)/hours))
}

// measureAt waits until at has passed since the last change, then
// measures reach and prints it, t paused meanwhile.
func (g *grower) measureAt(t *traffic, at time.Duration, phase string, report func(string, ...any)) {
	time.Sleep(time.Until(g.changed.Add(at)))
	t.pause()
	report("%s %s", phase, g.measure())
	t.resume()
}

// meanOf describes the mean of xs.
func meanOf(xs []int64) string {
	if len(xs) == 0 {
		return "none"
	}
	sum := int64(0)
	for _, x := range xs {
		sum += x
	}
	return fmt.Sprintf("mean %.1f, min %d, max %d", float64(sum)/float64(len(xs)), slices.Min(xs), slices.Max(xs))
}

// cycle is one reprovide cycle of a household.
type cycle struct {
	keys int64
	// provider are the messages the sweeping provider sent
	// (ProvideStats.Messages: ADD_PROVIDERs, its walks' queries not
	// counted), walks its DHT walks, dht every DHT message the
	// household sent meanwhile (the walks' queries too).
	provider, walks, dht int64
	took                 time.Duration
}

// probeCycle joins a household with reprovide interval every (connected
// as the others), holding one file of a two-word title of its own (as
// many keys as a holder of the common title), waits for its first
// provide and then for one reprovide of every key, and returns that
// cycle; then the household leaves.
func (g *grower) probeCycle(every time.Duration) cycle {
	g.tb.Helper()
	live := g.n.Live()
	m, err := g.n.JoinWith(g.ctx, JoinOptions{Connect: []*Member{live[len(live)-1], live[g.n.Intn(len(live)-1)]}, ReprovideInterval: every})
	if err != nil {
		g.tb.Fatal(err)
	}
	g.skip[m] = true
	if _, err := g.n.AddFiles(g.ctx, m, 1, func(int) string { return "Lantern Quarry" }); err != nil {
		g.tb.Fatal(err)
	}
	g.waitProvided(m)
	s0, d0, t0 := m.HH.ProvideStats(), m.DHTMessages(), time.Now()
	var s1 announce.Stats
	waiting.Until(g.tb, fmt.Sprintf("household %d to reprovide its %d keys (interval %s)", m.Index, s0.Keys, every), func() string {
		s1 = m.HH.ProvideStats()
		if s1.Provided >= s0.Provided+s0.Keys {
			return ""
		}
		return fmt.Sprintf("%d reprovided", s1.Provided-s0.Provided)
	}, waiting.Limit(3*every+waiting.Guard), waiting.Every(time.Second))
	c := cycle{keys: s0.Keys, provider: s1.Messages - s0.Messages, walks: s1.Walks - s0.Walks, dht: m.DHTMessages() - d0, took: time.Since(t0)}
	if err := g.n.Kill(m.Index); err != nil {
		g.tb.Fatal(err)
	}
	return c
}

// holding says how many of ms hold the common title, and whether the
// rare title's holder is one.
func (g *grower) holding(ms []*Member) string {
	common, rare := 0, "not"
	for _, m := range ms {
		switch {
		case slices.Contains(g.common, m):
			common++
		case m == g.rare:
			rare = "and"
		}
	}
	return fmt.Sprintf("%d holders of the common title, %s the rare title's holder", common, rare)
}

// churn: 30% of the live households leave at once, four holders of the
// common title and the holder of the rare one among them; reach is
// measured right after (first) and later (second); then half of those
// come back one by one, each connected to two live households drawn at
// random, two of those holders and the rare one among them, and reach is
// measured again at the same times.
func (g *grower) churn(first, second time.Duration, report func(string, ...any)) {
	g.tb.Helper()
	live := g.n.Live()
	var leave []*Member
	for _, m := range append(slices.Clone(g.common[:min(4, len(g.common))]), g.rare) {
		if m != nil && m.Alive {
			leave = append(leave, m)
		}
	}
	back := slices.Clone(leave[:min(2, len(leave))])
	if g.rare != nil && g.rare.Alive {
		back = append(back, g.rare)
	}
	forced := len(leave)
	order := slices.Clone(live)
	for i := len(order) - 1; i > 0; i-- {
		j := g.n.Intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for _, m := range order {
		if len(leave) >= len(live)*3/10 {
			break
		}
		if !slices.Contains(leave, m) {
			leave = append(leave, m)
		}
	}
	for _, m := range leave[forced:] {
		if len(back) >= len(leave)/2 {
			break
		}
		back = append(back, m)
	}
	t := newTraffic(g.n)
	if err := g.n.KillAll(leave); err != nil {
		g.tb.Fatal(err)
	}
	g.changed = time.Now()
	t.tick()
	report("churn: %d of %d households left at once (%s)", len(leave), len(live), g.holding(leave))
	g.measureAt(t, first, "leave", report)
	g.measureAt(t, second, "leave", report)
	started := time.Now()
	for _, m := range back {
		stay := g.n.Live()
		a := stay[g.n.Intn(len(stay))]
		c := stay[g.n.Intn(len(stay))]
		for c == a && len(stay) > 1 {
			c = stay[g.n.Intn(len(stay))]
		}
		if _, err := g.n.Rejoin(g.ctx, m.Index, JoinOptions{Connect: []*Member{a, c}}); err != nil {
			g.tb.Fatalf("household %d back: %v", m.Index, err)
		}
		t.tick()
	}
	g.changed = time.Now()
	report("churn: %d of them came back one by one in %s, on their identity, database and provider datastore (%s)",
		len(back), time.Since(started).Round(time.Second), g.holding(back))
	g.measureAt(t, first, "return", report)
	g.measureAt(t, second, "return", report)
	t.pause()
	report("churn: from the leave to the last measurement (reach measurements left out): %s", t)
}
