package federation

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Peer score tuning.
const (
	// scoreHalfLife is how fast a peer's marks fade: a peer that hung on
	// a search six hours ago weighs half as much as one that hung now.
	scoreHalfLife = 6 * time.Hour
	// maxScored bounds the peers remembered; past it the faintest go.
	maxScored = 10_000
	// Weights of a mark. A lie (a record whose pairing its bytes
	// disproved) weighs enough that its peer is not believed for about a
	// day (distrustAbove); a hang or an error only moves the peer back in
	// the order it is asked in.
	weightHang = 1
	weightLie  = 64
	// distrustAbove is the score past which a peer's records are not
	// believed: a lie stays past it for log2(64/4) = 4 half-lives, a day.
	distrustAbove = 4
)

// scores remembers peers that hung or lied, each mark fading with
// scoreHalfLife, so that they are asked last and a liar's records are
// not believed. Safe for concurrent use.
type scores struct {
	mu  sync.Mutex
	m   map[peer.ID]mark
	now func() time.Time
}

// mark is a peer's score as it stood at at.
type mark struct {
	v  float64
	at time.Time
}

func newScores() *scores { return &scores{m: map[peer.ID]mark{}, now: time.Now} }

// valueAt is m's value at t.
func (m mark) valueAt(t time.Time) float64 {
	return m.v * math.Exp2(-float64(t.Sub(m.at))/float64(scoreHalfLife))
}

// add marks p with weight w (weightHang, weightLie).
func (s *scores) add(p peer.ID, w float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.m[p] = mark{v: s.m[p].valueAt(now) + w, at: now}
	if len(s.m) > maxScored {
		var faint peer.ID
		least := math.Inf(1)
		for q, m := range s.m {
			if v := m.valueAt(now); v < least {
				faint, least = q, v
			}
		}
		delete(s.m, faint)
	}
}

// of is p's score now: 0 for a peer never marked.
func (s *scores) of(p peer.ID) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[p]
	if !ok {
		return 0
	}
	return m.valueAt(s.now())
}

// distrusted reports whether p's records are not to be believed now.
func (s *scores) distrusted(p peer.ID) bool { return s.of(p) > distrustAbove }

// order returns ps in an order no peer can choose: shuffled, then the
// marked ones after the others, the worst last. ps is not changed.
func (s *scores) order(ps []peer.ID) []peer.ID {
	out := slices.Clone(ps)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	s.mu.Lock()
	now := s.now()
	v := make(map[peer.ID]float64, len(out))
	for _, p := range out {
		if m, ok := s.m[p]; ok {
			v[p] = m.valueAt(now)
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(out, func(a, b peer.ID) int {
		// Marks under a hundredth of a hang are as good as none.
		return cmpScore(v[a], v[b])
	})
	return out
}

// cmpScore orders scores, those under 0.01 equal to none.
func cmpScore(a, b float64) int {
	if a < 0.01 {
		a = 0
	}
	if b < 0.01 {
		b = 0
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// least is the index in ps of the least marked peer, the first of those
// equal (as order compares them); -1 when ps is empty.
func (s *scores) least(ps []peer.ID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	best, bestV := -1, 0.0
	for i, p := range ps {
		v := s.m[p].valueAt(now)
		if best < 0 || cmpScore(v, bestV) < 0 {
			best, bestV = i, v
		}
	}
	return best
}
