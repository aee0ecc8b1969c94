package federation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/protocol"
)

// twinFinder is an in-memory twin of the DHT's provider lookups: each
// word's walk names the providers the test gives it, when it gives them,
// and is over when the test ends it or its ctx ends (stopped).
type twinFinder struct {
	mu    sync.Mutex
	walks map[string]*twinWalk
}

type twinWalk struct {
	names   chan peer.ID
	stopped chan struct{}
}

func (f *twinFinder) walk(key cid.Cid) *twinWalk {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.walks == nil {
		f.walks = map[string]*twinWalk{}
	}
	w := f.walks[key.KeyString()]
	if w == nil {
		w = &twinWalk{names: make(chan peer.ID), stopped: make(chan struct{})}
		f.walks[key.KeyString()] = w
	}
	return w
}

func (f *twinFinder) FindProvidersAsync(ctx context.Context, key cid.Cid, _ int) <-chan peer.AddrInfo {
	w := f.walk(key)
	out := make(chan peer.AddrInfo)
	go func() {
		defer close(out)
		for {
			select {
			case p, ok := <-w.names:
				if !ok {
					return
				}
				select {
				case out <- peer.AddrInfo{ID: p}:
				case <-ctx.Done():
					close(w.stopped)
					return
				}
			case <-ctx.Done():
				close(w.stopped)
				return
			}
		}
	}()
	return out
}

// keywordScene is one search's keyword lookups on a twin, and what they
// sent.
type keywordScene struct {
	t    *testing.T
	f    *twinFinder
	out  <-chan peer.AddrInfo
	sent []peer.ID
}

func newKeywordScene(t *testing.T, words ...string) *keywordScene {
	s := &keywordScene{t: t, f: &twinFinder{}}
	s.out = keywordCandidates(waiting.Context(t), s.f, "self", words, walkNearest)
	return s
}

// name has word w's walk name households ps.
func (s *keywordScene) name(w string, ps ...peer.ID) {
	for _, p := range ps {
		select {
		case s.f.walk(protocol.SearchTokenKey(w)).names <- p:
		case <-waiting.After():
			s.t.Fatalf("word %q's walk: nobody took %s", w, p)
		}
	}
}

// end ends word w's walk.
func (s *keywordScene) end(w string) { close(s.f.walk(protocol.SearchTokenKey(w)).names) }

// recv takes the next household sent.
func (s *keywordScene) recv() peer.ID {
	ai, ok := waiting.Recv(s.t, s.out, "a household sent")
	if !ok {
		s.t.Fatalf("sent %v, then closed; want one more", s.sent)
	}
	s.sent = append(s.sent, ai.ID)
	return ai.ID
}

// rest takes what is sent until the channel closes.
func (s *keywordScene) rest() []peer.ID {
	for {
		ai, ok := waiting.Recv(s.t, s.out, "the end of the households sent")
		if !ok {
			return s.sent
		}
		s.sent = append(s.sent, ai.ID)
	}
}

// stopped reports whether word w's walk was ended by the search.
func (s *keywordScene) stopped(w string) bool {
	select {
	case <-s.f.walk(protocol.SearchTokenKey(w)).stopped:
		return true
	default:
		return false
	}
}

func households(prefix string, n int) []peer.ID {
	out := make([]peer.ID, n)
	for i := range out {
		out[i] = peer.ID(fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

func TestKeywordCandidates(t *testing.T) {
	many := households("c", searchNarrowTo+4) // more than a narrowing takes
	t.Run("a household providing every word is sent at once", func(t *testing.T) {
		s := newKeywordScene(t, "lantern", "quarry")
		s.name("lantern", "x", "h")
		s.name("quarry", "h")
		if got := s.recv(); got != "h" {
			t.Fatalf("sent %s first, want h", got)
		}
		// quarry's lookup is over: h is the only one found that can hold
		// a match, and lantern's lookup ends; x follows, in case
		// quarry's walk missed it.
		s.end("quarry")
		if got := s.rest(); !slices.Equal(got, []peer.ID{"h", "x"}) {
			t.Fatalf("sent %v, want [h x]", got)
		}
		waiting.For(t, "the other word's walk to end", func() bool { return s.stopped("lantern") })
	})
	t.Run("one word's lookup over with few providers: they are all asked, the other lookups end", func(t *testing.T) {
		s := newKeywordScene(t, "common", "zyzzogeton")
		s.name("common", many...)
		s.name("zyzzogeton", "x", many[3])
		if got := s.recv(); got != many[3] {
			t.Fatalf("sent %s first, want %s (both words)", got, many[3])
		}
		s.end("zyzzogeton")
		// Then, up to searchNarrowTo in all, households named for
		// "common" alone: as many as the search had taken by then.
		got := s.rest()
		if want := []peer.ID{many[3], "x"}; len(got) < 2 || !slices.Equal(got[:2], want) || len(got) > searchNarrowTo {
			t.Fatalf("sent %v, want %v, then at most %d more", got, want, searchNarrowTo-2)
		}
		for _, p := range got[2:] {
			if !slices.Contains(many, p) {
				t.Errorf("sent %s, named by no walk", p)
			}
		}
		waiting.For(t, "the other word's walk to end", func() bool { return s.stopped("common") })
	})
	t.Run("a word nobody is found providing: the other word's households, once its walk is over", func(t *testing.T) {
		s := newKeywordScene(t, "common", "unheard")
		s.name("common", "a", "b")
		s.end("unheard")
		s.name("common", "c")
		s.end("common")
		if got := s.rest(); !slices.Equal(got, []peer.ID{"a", "b", "c"}) {
			t.Fatalf("sent %v, want [a b c]", got)
		}
		if s.stopped("common") {
			t.Error("the other word's walk was ended before it was over")
		}
	})
	t.Run("a long word narrows nothing; those missing only it follow the lookups", func(t *testing.T) {
		long := households("l", searchIndexProviders)
		s := newKeywordScene(t, "the", "odyssey")
		s.name("the", long...)
		s.end("the")
		s.name("odyssey", long[7], "z")
		if got := s.recv(); got != long[7] {
			t.Fatalf("sent %s, want %s", got, long[7])
		}
		s.end("odyssey")
		if got := s.rest(); !slices.Equal(got, []peer.ID{long[7], "z"}) {
			t.Fatalf("sent %v, want [%s z]", got, long[7])
		}
	})
	t.Run("the node itself is never sent", func(t *testing.T) {
		s := newKeywordScene(t, "lantern")
		s.name("lantern", "self", "h")
		s.end("lantern")
		if got := s.rest(); !slices.Equal(got, []peer.ID{"h"}) {
			t.Fatalf("sent %v, want [h]", got)
		}
	})
	t.Run("no words: nobody", func(t *testing.T) {
		s := newKeywordScene(t)
		if got := s.rest(); len(got) != 0 {
			t.Fatalf("sent %v, want nobody", got)
		}
	})
}

// The order of two lookups' ends decides what is sent, so it is given
// here event by event: a lookup over with more than searchNarrowTo
// providers narrows nothing, and the other lookups go on.
func TestKeywordSearch_ManyProvidersNarrowNothing(t *testing.T) {
	many := households("c", searchNarrowTo+4)
	k := newKeywordSearch(2)
	var sent []peer.ID
	take := func(evs []keywordEvent) {
		for _, ev := range evs {
			for _, ai := range k.take(ev) {
				sent = append(sent, ai.ID)
			}
		}
	}
	take(slices.Concat(named(0, many...), over(0)))
	if k.narrowed || len(sent) != 0 {
		t.Fatalf("after a lookup over with %d providers: narrowed %v, sent %v", len(many), k.narrowed, sent)
	}
	take(slices.Concat(named(1, "y", many[5]), over(1)))
	// many[5] provides both; then y, named by the telling word; not
	// the households named only by the word with too many of them.
	if want := []peer.ID{many[5], "y"}; !slices.Equal(sent, want) {
		t.Fatalf("sent %v, want %v", sent, want)
	}
}

// named is word's walk naming ps, one event each.
func named(word int, ps ...peer.ID) []keywordEvent {
	evs := make([]keywordEvent, len(ps))
	for i, p := range ps {
		evs[i] = keywordEvent{word: word, ai: peer.AddrInfo{ID: p}}
	}
	return evs
}

// over is the end of each of words' walks.
func over(words ...int) []keywordEvent {
	evs := make([]keywordEvent, len(words))
	for i, w := range words {
		evs[i] = keywordEvent{word: w, over: true}
	}
	return evs
}

// A household one word's walk missed is asked when another word's walk
// named it: the walk over first narrows to the households it found, and
// those the other walks had named by then follow, the households
// providing more words first, then those named by the word with the
// fewest households.
func TestKeywordSearch_OneWalkMissesAHolder(t *testing.T) {
	cases := []struct {
		name   string
		events []keywordEvent
		want   []peer.ID
		narrow bool
	}{
		{"the walk over first missed the holder that another named",
			slices.Concat(named(1, "missed"), named(2, "missed"), named(0, "a"), named(1, "a"), named(0, "b"), over(0)),
			[]peer.ID{"a", "b", "missed"}, true},
		{"the only holder missed by the walk over first: nothing narrows, the others go on",
			slices.Concat(over(0), named(1, "rare"), over(1), named(2, "rare"), over(2)),
			[]peer.ID{"rare"}, false},
		{"the households of the word with the fewest come first",
			slices.Concat(named(0, "p1", "p2", "p3"), named(1, "s"), named(2, "q"), over(2)),
			[]peer.ID{"q", "s", "p1", "p2", "p3"}, true},
		{"a word naming more than searchNarrowTo households: those it alone named are not asked",
			slices.Concat(named(0, households("c", searchNarrowTo+1)...), named(1, "t"), over(0, 1, 2)),
			[]peer.ID{"t"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKeywordSearch(3)
			var sent []peer.ID
			for _, ev := range c.events {
				for _, ai := range k.take(ev) {
					sent = append(sent, ai.ID)
				}
			}
			if !k.narrowed && slices.Index(k.over, false) < 0 {
				for _, ai := range k.rest() {
					sent = append(sent, ai.ID)
				}
			}
			if !slices.Equal(sent, c.want) || k.narrowed != c.narrow {
				t.Fatalf("sent %v (narrowed %v), want %v (narrowed %v)", sent, k.narrowed, c.want, c.narrow)
			}
		})
	}
}
