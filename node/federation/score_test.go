package federation

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

func TestScores_FadeAndOrder(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s := newScores()
	s.now = func() time.Time { return now }
	hang, liar, clean := peer.ID("hang"), peer.ID("liar"), peer.ID("clean")
	s.add(hang, weightHang)
	s.add(liar, weightLie)
	tests := []struct {
		after          time.Duration
		hang, liar     float64
		liarDistrusted bool
		order          []peer.ID
	}{
		{0, 1, 64, true, []peer.ID{clean, hang, liar}},
		{scoreHalfLife, 0.5, 32, true, []peer.ID{clean, hang, liar}},
		{4 * scoreHalfLife, 1.0 / 16, 4, false, []peer.ID{clean, hang, liar}},
		{8 * scoreHalfLife, 1.0 / 256, 0.25, false, []peer.ID{clean, hang, liar}},
	}
	for _, tc := range tests {
		s.now = func() time.Time { return now.Add(tc.after) }
		if got := s.of(hang); !near(got, tc.hang) {
			t.Errorf("after %s: hang's score %g, want %g", tc.after, got, tc.hang)
		}
		if got := s.of(liar); !near(got, tc.liar) {
			t.Errorf("after %s: liar's score %g, want %g", tc.after, got, tc.liar)
		}
		if got := s.distrusted(liar); got != tc.liarDistrusted {
			t.Errorf("after %s: liar distrusted %v, want %v", tc.after, got, tc.liarDistrusted)
		}
		if s.distrusted(hang) || s.distrusted(clean) {
			t.Errorf("after %s: a hang or nothing distrusts a peer", tc.after)
		}
		// Marks under 0.01 count as none: at 8 half-lives the hang is
		// as good as clean, so only the liar's place is fixed.
		for range 20 {
			got := s.order([]peer.ID{liar, hang, clean})
			if got[2] != liar {
				t.Fatalf("after %s: order %v, want the liar last", tc.after, got)
			}
			if tc.after < 8*scoreHalfLife && got[0] != clean {
				t.Fatalf("after %s: order %v, want %v", tc.after, got, tc.order)
			}
		}
	}
	if got := s.of(clean); got != 0 {
		t.Errorf("an unmarked peer's score is %g, want 0", got)
	}
}

func TestScores_OrderIsShuffled(t *testing.T) {
	s := newScores()
	ps := []peer.ID{"a", "b", "c", "d", "e", "f", "g", "h"}
	firsts := map[peer.ID]bool{}
	for range 200 {
		firsts[s.order(ps)[0]] = true
	}
	if len(firsts) < len(ps) {
		t.Errorf("200 orders of %d unmarked peers began with only %d of them: the order is not random", len(ps), len(firsts))
	}
}

func TestScores_Bounded(t *testing.T) {
	s := newScores()
	for i := range maxScored + 50 {
		s.add(peer.ID(rune(i)), weightHang)
	}
	if n := len(s.m); n > maxScored {
		t.Errorf("%d peers remembered, want at most %d", n, maxScored)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }
