package federation

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/model"
)

// The rules of a federated lookup, against the twin (resolvetwin_test.go):
// households in memory whose answers the test releases in the order it
// chooses, a real store. The same rules on real hosts and redis-server:
// TestTrust_HolderOutranksFastestAnswer and TestTrust_PairingAttack
// (package node).

// Which record a lookup takes: a provider P (the DHT's walk names it)
// and a fan-out peer F (connected), F's record always the faster.
func TestLookup_WhichRecordWins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// hold is the fan-out hold (fanoutHold in a household).
		hold time.Duration
		// pConnected: P is a connected peer too, asked by the fan-out.
		pConnected bool
		// play releases the events in order; it returns who must win.
		play func(t *testing.T, walk chan<- peer.ID, f twinFile, s *twinScene, p, fan *twinHousehold) *twinHousehold
	}{{
		name: "a provider's record over a faster fan-out answer",
		hold: waiting.Guard,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, _ *twinScene, p, fan *twinHousehold) *twinHousehold {
			fan.record(t, f)
			fan.waitAsked(t)
			walkNames(t, walk, p)
			p.waitAsked(t)
			p.record(t, f)
			return p
		},
	}, {
		name: "a provider's record that comes after the walk is over",
		hold: waiting.Guard,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, _ *twinScene, p, fan *twinHousehold) *twinHousehold {
			walkNames(t, walk, p)
			p.waitAsked(t)
			close(walk)
			fan.record(t, f)
			fan.waitAsked(t)
			p.record(t, f)
			return p
		},
	}, {
		name:       "the record of a provider the fan-out asked first",
		hold:       waiting.Guard,
		pConnected: true,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, _ *twinScene, p, fan *twinHousehold) *twinHousehold {
			fan.record(t, f)
			p.waitAsked(t)
			walkNames(t, walk, p)
			p.record(t, f)
			return p
		},
	}, {
		name: "the fan-out's record once the walk is over and its providers had none",
		hold: waiting.Guard,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, _ *twinScene, p, fan *twinHousehold) *twinHousehold {
			walkNames(t, walk, p)
			p.waitAsked(t)
			p.fail(errNoRecord)
			close(walk)
			fan.record(t, f)
			return fan
		},
	}, {
		name: "the fan-out's record when no provider answered before the hold ended",
		hold: time.Millisecond,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, _ *twinScene, p, fan *twinHousehold) *twinHousehold {
			walkNames(t, walk, p) // it never answers, and the walk goes on
			p.waitAsked(t)
			fan.record(t, f)
			return fan
		},
	}, {
		name: "not a provider's record that another household signed",
		hold: waiting.Guard,
		play: func(t *testing.T, walk chan<- peer.ID, f twinFile, s *twinScene, p, fan *twinHousehold) *twinHousehold {
			walkNames(t, walk, p)
			p.waitAsked(t)
			p.passOn(t, f, s.tw.household(t, "X"))
			close(walk)
			fan.record(t, f)
			return fan
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTwinScene(t, waiting.Guard, tc.hold)
			f := newTwinFile(t, "Quiet Harbour")
			p, fan := s.tw.household(t, "P"), s.tw.household(t, "F")
			s.tw.connect(fan)
			if tc.pConnected {
				s.tw.connect(p)
			}
			res := s.lookup(t, f.canonical)
			want := tc.play(t, s.walk(t), f, s, p, fan)
			got := answered(t, res)
			wantSource(t, got, want, p, fan)
			if !slices.Contains(got.doc.Providers, want.id.String()) {
				t.Errorf("providers %v do not name %s, whose record it is", got.doc.Providers, want.name)
			}
			if n := p.asks.Load(); n != 1 {
				t.Errorf("P was asked %d times, want once", n)
			}
		})
	}
}

// Whom a lookup asks, and in what order: the fan-out's 8 places are all
// held by peers that hang, so who is asked next shows the order.
func TestLookup_WhatItAsks(t *testing.T) {
	t.Parallel()
	// busy are n connected households that hang when asked.
	busy := func(t *testing.T, s *twinScene, n int) []*twinHousehold {
		var hs []*twinHousehold
		for range n {
			hs = append(hs, s.tw.household(t, "busy"))
		}
		s.tw.connect(hs...)
		return hs
	}
	asks := func(hs []*twinHousehold) int64 {
		var n int64
		for _, h := range hs {
			n += h.asks.Load()
		}
		return n
	}
	fanOutFull := func(t *testing.T, hs []*twinHousehold) {
		t.Helper()
		waiting.For(t, "the fan-out's places to be taken", func() bool { return asks(hs) >= lookupFanout })
	}

	t.Run("the walk's providers at once, while the fan-out is full", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		hs := busy(t, s, lookupFanout+1)
		p := s.tw.household(t, "P")
		res := s.lookup(t, f.canonical)
		walk := s.walk(t)
		fanOutFull(t, hs)
		walkNames(t, walk, p)
		p.waitAsked(t)
		if n := asks(hs); n != lookupFanout {
			t.Fatalf("%d connected households asked with the fan-out's %d places held, want %d", n, lookupFanout, lookupFanout)
		}
		p.record(t, f)
		wantSource(t, answered(t, res), p)
	})

	t.Run("the connected peers before the routing table's", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		hs := busy(t, s, lookupFanout)
		rt := s.tw.household(t, "R")
		s.tw.route(rt)
		s.tw.route(hs...)
		res := s.lookup(t, f.canonical)
		close(s.walk(t))
		fanOutFull(t, hs)
		if n := rt.asks.Load(); n != 0 {
			t.Fatalf("the routing table's household was asked before a connected one (%d asks)", n)
		}
		hs[0].fail(errNoRecord)
		rt.waitAsked(t)
		rt.record(t, f)
		wantSource(t, answered(t, res), rt)
	})

	t.Run("a peer marked for hanging after the others", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		hs := busy(t, s, lookupFanout)
		m := s.tw.household(t, "M")
		s.tw.connect(m)
		s.r.scores.add(m.id, weightHang)
		res := s.lookup(t, f.canonical)
		close(s.walk(t))
		fanOutFull(t, hs)
		if n := m.asks.Load(); n != 0 {
			t.Fatalf("the marked household was asked among the first %d", lookupFanout)
		}
		hs[0].fail(errNoRecord)
		m.waitAsked(t)
		m.record(t, f)
		wantSource(t, answered(t, res), m)
	})

	t.Run("never a peer whose lie was disproved", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		liar := s.tw.household(t, "L")
		s.tw.connect(liar)
		liar.record(t, f)
		(&Household{scores: s.r.scores}).Disproved(liar.id)
		res := s.lookup(t, f.canonical)
		walk := s.walk(t)
		walkNames(t, walk, liar)
		close(walk)
		got := answered(t, res)
		wantMiss(t, got, "on the 1 peers asked")
		wantMiss(t, got, liar.id.String()+": "+errDistrusted.Error())
		if n := liar.asks.Load(); n != 0 {
			t.Errorf("the distrusted household was asked %d times", n)
		}
	})

	t.Run("never itself", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		s.tw.add(&s.tw.conns, s.tw.me)
		s.tw.add(&s.tw.table, s.tw.me)
		res := s.lookup(t, f.canonical)
		walk := s.walk(t)
		walkNamesID(t, walk, s.tw.me)
		close(walk)
		// The twin fails the test if the household asks itself.
		wantMiss(t, answered(t, res), "on the 0 peers asked (the DHT named no household providing it)")
	})
}

// When a lookup ends.
func TestLookup_WhenItStops(t *testing.T) {
	t.Parallel()
	t.Run("at a provider's first verified record, the others let go", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, waiting.Guard, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		slow := []*twinHousehold{s.tw.household(t, "slow"), s.tw.household(t, "slow")}
		s.tw.connect(slow...)
		p := s.tw.household(t, "P")
		res := s.lookup(t, f.canonical)
		walk := s.walk(t) // never over
		for _, h := range slow {
			h.waitAsked(t)
		}
		walkNames(t, walk, p)
		p.waitAsked(t)
		p.record(t, f)
		wantSource(t, answered(t, res), p)
		for _, h := range slow {
			waiting.For(t, "a household still asked to be let go", func() bool { return h.abandoned.Load() == 1 })
		}
	})

	for _, tc := range []struct {
		name string
		// fail is how the provider and the connected household answer.
		fail error
		want string
	}{
		{"once the walk is over and every household asked had none", errNoRecord, "on the 2 peers asked"},
		{"once the walk is over, telling of records a relay cut off", errRelayCut, "2 answered over a relay that cut the record off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTwinScene(t, waiting.Guard, waiting.Guard)
			f := newTwinFile(t, "Quiet Harbour")
			p, c := s.tw.household(t, "P"), s.tw.household(t, "C")
			s.tw.connect(c)
			res := s.lookup(t, f.canonical)
			walk := s.walk(t)
			walkNames(t, walk, p)
			close(walk)
			p.fail(tc.fail)
			c.fail(tc.fail)
			got := answered(t, res)
			wantMiss(t, got, tc.want)
			// The miss says what became of the provider the walk named.
			wantMiss(t, got, "the DHT named 1 household providing it, none gave its record: "+p.id.String()+": "+tc.fail.Error())
		})
	}

	t.Run("at the lookup timeout, and the miss is remembered", func(t *testing.T) {
		t.Parallel()
		s := newTwinScene(t, 200*time.Millisecond, waiting.Guard)
		f := newTwinFile(t, "Quiet Harbour")
		c := s.tw.household(t, "C")
		s.tw.connect(c)
		res := s.lookup(t, f.canonical)
		s.walk(t) // never over, and C never answers: only the timeout ends it
		wantMiss(t, answered(t, res), "had it within 200ms")
		asked := c.asks.Load()
		wantMiss(t, answered(t, s.lookup(t, f.canonical)), "(cached for 5s)")
		if len(s.tw.walks) != 0 || c.asks.Load() != asked {
			t.Errorf("a remembered miss asked the network again")
		}
	})
}

// A household whose lie was disproved (Household.Disproved, as a fetch
// whose bytes do not hold to the CID does) is not asked by the next
// lookup, which finds the holder's record.
func TestLookup_DisprovedLie(t *testing.T) {
	t.Parallel()
	s := newTwinScene(t, waiting.Guard, waiting.Guard)
	f := newTwinFile(t, "Quiet Harbour")
	lie := newTwinFile(t, "Other Bytes").cids[0]
	liar := s.tw.household(t, "L")
	s.tw.connect(liar)
	liar.record(t, f, lie)
	res := s.lookup(t, f.canonical)
	close(s.walk(t))
	got := answered(t, res)
	wantSource(t, got, liar)
	if !slices.Contains(got.doc.CIDs, lie) {
		t.Fatalf("the liar's pairing was not merged (the case is not set up): %v", got.doc.CIDs)
	}

	(&Household{scores: s.r.scores}).Disproved(liar.id)
	doc, err := s.st.DocumentByCID(t.Context(), f.canonical)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.DeleteRoot(t.Context(), doc.Root); err != nil {
		t.Fatal(err)
	}

	holder := s.tw.household(t, "H")
	s.tw.connect(holder)
	holder.record(t, f)
	liar.record(t, f, lie)
	res = s.lookup(t, f.canonical)
	close(s.walk(t))
	got = answered(t, res)
	wantSource(t, got, holder, liar)
	if slices.Contains(got.doc.CIDs, lie) {
		t.Errorf("the disproved pairing is still answered: %v", got.doc.CIDs)
	}
	if n := liar.asks.Load(); n != 1 {
		t.Errorf("the liar was asked %d times, want once (before its lie was disproved)", n)
	}
}

// wantMiss checks that a lookup answered 404 with an error that says want.
func wantMiss(t *testing.T, got lookupResult, want string) {
	t.Helper()
	if !errors.Is(got.err, model.ErrNotFound) || !strings.Contains(got.err.Error(), want) {
		t.Fatalf("lookup: %v (source %q); want a 404 that says %q", got.err, got.doc.Source, want)
	}
}
