package sim

import (
	"context"
	"fmt"
	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
)

// findable reports whether from's DHT returns m as a provider of c.
func findable(ctx context.Context, from, m *Member, c string) bool {
	id, err := cid.Decode(c)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for ai := range from.HH.DHT().FindProvidersAsync(ctx, id, 20) {
		if ai.ID == m.ID {
			return true
		}
	}
	return false
}

// A small simulated federation (30 households, 50 ms median links): files
// of a few households are provided through the sweeping provider and
// found from random households, by CID (the federated lookup) and by
// title (federated search); households that only look files up provide
// nothing; after 30% of the households leave and as many join, every file
// of the households that stayed is still findable once a reprovide cycle
// has passed.
func TestSim_SmallFederation(t *testing.T) {
	ctx := context.Background()
	n, err := New(ctx, Options{Households: 30, Seed: 7, Dir: t.TempDir(),
		ReprovideInterval: 4 * time.Second, ProviderRecordTTL: 30 * time.Second, LookupTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	began := time.Now()
	stage := func(what string) { t.Logf("%s after %s", what, time.Since(began).Round(time.Millisecond)) }
	stage("30 households up")

	holders := n.Live()[:6]
	for i, m := range holders {
		if _, err := n.AddFiles(ctx, m, 3, func(k int) string {
			if k == 0 {
				return "Shared Title" // every holder has one
			}
			return fmt.Sprintf("Film %d of %d", k, i)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range holders {
		waiting.For(t, fmt.Sprintf("household %d to provide its 3 files", m.Index), func() bool {
			st := m.HH.ProvideStats()
			return st.CIDKeys == 3 && st.Provided >= 3
		})
	}

	stage("18 files provided")
	for k := range 8 {
		owner := holders[k%len(holders)]
		c := owner.CIDs[1+k%2]
		from := n.Random(owner)
		doc, err := from.HH.Lookup(ctx, c)
		if err != nil {
			t.Fatalf("household %d's lookup of household %d's %s: %v", from.Index, owner.Index, c, err)
		}
		if doc.Source != owner.ID.String() && doc.Source != "local" {
			t.Errorf("household %d resolved %s from %v, want household %d", from.Index, c, doc.Source, owner.Index)
		}
		if st := from.HH.ProvideStats(); !slices.Contains(holders, from) && st.Keys != 0 {
			t.Errorf("household %d looked a file up and provides %d keys", from.Index, st.Keys)
		}
	}

	stage("8 lookups")
	// Every holder provides the words of its titles: a search from any
	// household finds all six, connected or not.
	for range 3 {
		from := n.Random(nil)
		res, err := from.HH.Search(ctx, "shared title", 20)
		if err != nil {
			t.Fatal(err)
		}
		if got := holdersFound(res, from, holders); got != len(holders) {
			t.Errorf("a federated search from household %d found %d of the %d households holding the title (asked %d, %d from the index)",
				from.Index, got, len(holders), res.Asked, res.FromIndex)
		}
	}

	// Churn: a third of the households that hold nothing leave, as many join.
	var gone []*Member
	for _, m := range n.Live() {
		if !slices.Contains(holders, m) && len(gone) < 9 {
			gone = append(gone, m)
		}
	}
	if err := n.KillAll(gone); err != nil {
		t.Fatal(err)
	}
	for range gone {
		if _, err := n.Join(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stage("search and churn")
	cycle := time.Now()
	waiting.For(t, "a reprovide cycle past the churn", func() bool {
		for _, m := range holders {
			if at := m.HH.ProvideStats().NextReprovideAt; at.IsZero() || !at.After(cycle.Add(4*time.Second)) {
				return false
			}
		}
		return true
	})
	stage("a reprovide cycle")
	for _, m := range holders {
		for _, c := range m.CIDs {
			from := n.Random(m)
			waiting.For(t, fmt.Sprintf("household %d to find household %d's %s", from.Index, m.Index, c), func() bool {
				return findable(ctx, from, m, c)
			})
		}
	}
	stage("every file findable")
}

// holdersFound counts the households of want whose hits a federated
// search from household from brought (from's own files count as found).
func holdersFound(res api.SearchResult, from *Member, want []*Member) int {
	found := map[string]bool{}
	for _, h := range res.Hits {
		for _, p := range h.Peers {
			found[p] = true
		}
		if h.Source == "local" {
			found[from.ID.String()] = true
		}
	}
	got := 0
	for _, m := range want {
		if found[m.ID.String()] {
			got++
		}
	}
	return got
}
