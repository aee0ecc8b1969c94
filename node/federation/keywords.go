package federation

import (
	"context"
	"math"
	"sort"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/protocol"
)

// searchNarrowTo is how few the households that can hold a match must
// be for a search to ask them all and end its keyword lookups early: two
// rounds of the index's asking (searchIndexParallel at a time). A
// household holds a match only if it provides every word of the query,
// so once one word's lookup is over, its providers are all the
// households that can; asking a few of them that turn out not to
// provide the other words costs a round trip each, where waiting for the
// other words' DHT walks costs the slowest of them (docs/figures.md).
const searchNarrowTo = 2 * searchIndexParallel

// indexCandidates finds, on the DHT's keyword index, the households that
// hold a file with the words of query q, and sends them on the channel it
// returns, which closes when the lookups are over (or ctx ends): see
// keywordCandidates.
func (ss *searchService) indexCandidates(ctx context.Context, q string) <-chan peer.AddrInfo {
	words := protocol.KeyedTokens(protocol.Tokens(q))
	if ss.providers == nil {
		words = nil
	}
	return keywordCandidates(ctx, ss.providers, ss.h.ID(), words, walkNearest)
}

// keywordCandidates looks up the providers of every word (each carries a
// key: protocol.Keyed) on f, all at once, each up to
// searchIndexProviders and each walk ended at its nearest peers
// (findNear), and sends on the channel it returns the households that
// can hold a file with all the words:
//
//   - a household as soon as it has been found providing every word;
//   - once the lookups of the words that are over leave between one and
//     searchNarrowTo households providing all of those words (a word
//     whose list reached searchIndexProviders, "long", narrows nothing:
//     holders may be missing from it), every one of them, those found
//     providing the most words first, and the other lookups end: no
//     other household can hold a match;
//   - else, when every lookup is over, the households missing only long
//     words, those providing the most words first;
//   - with either of the last two, up to searchNarrowTo sent in all, the
//     households found providing some of the words but not all (see
//     keywordSearch.partial): a walk can miss a record, so a household
//     one word's walk missed is still asked when another's named it.
//
// The channel closes when that is done (or ctx ends). No words send
// nobody: the query's words only narrow what the asked households
// answer. self is never sent.
func keywordCandidates(ctx context.Context, f providerFinder, self peer.ID, words []string, nearest int) <-chan peer.AddrInfo {
	out := make(chan peer.AddrInfo)
	if len(words) == 0 {
		close(out)
		return out
	}
	walks, stop := context.WithCancel(ctx)
	events, quit := make(chan keywordEvent), make(chan struct{})
	emit := func(ev keywordEvent) bool {
		select {
		case events <- ev:
			return true
		case <-quit:
			return false
		}
	}
	for i, w := range words {
		go func() {
			n := 0
			for ai := range findNear(walks, f, protocol.SearchTokenKey(w), searchIndexProviders, nearest) {
				n++
				if ai.ID != self && !emit(keywordEvent{word: i, ai: ai}) {
					return // the walk ends with walks, its forwarder with it
				}
			}
			emit(keywordEvent{word: i, over: true, long: n >= searchIndexProviders})
		}()
	}
	go func() {
		defer close(out)
		defer close(quit)
		defer stop()
		k := newKeywordSearch(len(words))
		var queue []peer.AddrInfo
		for running := len(words); (running > 0 && !k.narrowed) || len(queue) > 0; {
			var send chan<- peer.AddrInfo
			var next peer.AddrInfo
			if len(queue) > 0 {
				send, next = out, queue[0]
			}
			select {
			case ev := <-events:
				if ev.over {
					running--
				}
				queue = append(queue, k.take(ev)...)
				if k.narrowed {
					stop()
				} else if running == 0 {
					queue = append(queue, k.rest()...)
				}
			case send <- next:
				queue = queue[1:]
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// keywordEvent is one word's lookup naming a provider (ai), or its end
// (over; long when its list reached searchIndexProviders).
type keywordEvent struct {
	word       int
	ai         peer.AddrInfo
	over, long bool
}

// keywordSearch is what one search's keyword lookups found so far.
type keywordSearch struct {
	words int
	seen  map[peer.ID]*keywordHolder
	// over and long are each word's lookup's end, and its list's length
	// having reached searchIndexProviders; named is how many households
	// each word's lookup named.
	over, long []bool
	named      []int
	// narrowed: the households that can hold a match were sent, the
	// other lookups end (searchNarrowTo).
	narrowed bool
}

func newKeywordSearch(words int) *keywordSearch {
	return &keywordSearch{words: words, seen: map[peer.ID]*keywordHolder{},
		over: make([]bool, words), long: make([]bool, words), named: make([]int, words)}
}

// keywordHolder is a household the lookups named, the words it provides,
// and whether it was sent.
type keywordHolder struct {
	ai    peer.AddrInfo
	words map[int]bool
	sent  bool
}

// take is what one event makes the search send.
func (k *keywordSearch) take(ev keywordEvent) []peer.AddrInfo {
	if k.narrowed {
		return nil
	}
	if ev.over {
		k.over[ev.word], k.long[ev.word] = true, ev.long
		return k.narrow()
	}
	h := k.seen[ev.ai.ID]
	if h == nil {
		h = &keywordHolder{ai: peer.AddrInfo{ID: ev.ai.ID}, words: map[int]bool{}}
		k.seen[ev.ai.ID] = h
	}
	h.ai.Addrs = append(h.ai.Addrs, ev.ai.Addrs...)
	if !h.words[ev.word] {
		h.words[ev.word] = true
		k.named[ev.word]++
	}
	if h.sent || len(h.words) < k.words {
		return nil
	}
	h.sent = true
	return []peer.AddrInfo{h.ai}
}

// narrow sends, once they are at least one and at most searchNarrowTo,
// every household that provides each word whose lookup is over and is
// not long, then the partial ones, and marks the search narrowed. None
// narrows nothing: the walk that found no household providing all the
// words so far may have missed one, and the other words' walks go on.
func (k *keywordSearch) narrow() []peer.AddrInfo {
	var known []int
	for i := range k.words {
		if k.over[i] && !k.long[i] {
			known = append(known, i)
		}
	}
	if len(known) == 0 {
		return nil
	}
	can := k.holding(known)
	if len(can) == 0 || len(can) > searchNarrowTo {
		return nil
	}
	k.narrowed = true
	return append(k.send(can, len(can)), k.partial()...)
}

// rest sends, when every lookup is over, the households missing only
// long words, then the partial ones.
func (k *keywordSearch) rest() []peer.AddrInfo {
	var short []int
	for i := range k.words {
		if !k.long[i] {
			short = append(short, i)
		}
	}
	hs := k.holding(short)
	return append(k.send(hs, len(hs)), k.partial()...)
}

// partial sends, while fewer than searchNarrowTo were sent in all, the
// households found providing some of the words, but only those named by
// a telling word's walk (see telling), in send's order. A DHT walk can
// miss a record (one not yet handed to the peers now nearest its key, a
// peer that did not answer in time); a household that holds no match
// answers with no hits, which costs it one read of its index.
func (k *keywordSearch) partial() []peer.AddrInfo {
	var hs []*keywordHolder
	sent := 0
	for _, h := range k.seen {
		if h.sent {
			sent++
			continue
		}
		for i := range h.words {
			if k.telling(i) {
				hs = append(hs, h)
				break
			}
		}
	}
	return k.send(hs, searchNarrowTo-sent)
}

// telling reports whether word i's walk names few enough households (at
// most searchNarrowTo so far) for a household it named to be asked
// without being found providing the other words: a word many households
// provide says little of which of them hold the title.
func (k *keywordSearch) telling(i int) bool {
	return !k.long[i] && k.named[i] <= searchNarrowTo
}

// holding are the households found providing every word of words.
func (k *keywordSearch) holding(words []int) []*keywordHolder {
	var out []*keywordHolder
	for _, h := range k.seen {
		all := true
		for _, i := range words {
			if !h.words[i] {
				all = false
				break
			}
		}
		if all {
			out = append(out, h)
		}
	}
	return out
}

// send marks at most limit of those of hs not sent yet as sent and
// returns them: those providing the most words first, then those named
// by the telling word with the fewest households (the most telling),
// then by ID.
func (k *keywordSearch) send(hs []*keywordHolder, limit int) []peer.AddrInfo {
	fewest := func(h *keywordHolder) int {
		n := math.MaxInt
		for i := range h.words {
			if k.telling(i) {
				n = min(n, k.named[i])
			}
		}
		return n
	}
	sort.Slice(hs, func(i, j int) bool {
		if a, b := len(hs[i].words), len(hs[j].words); a != b {
			return a > b
		}
		if a, b := fewest(hs[i]), fewest(hs[j]); a != b {
			return a < b
		}
		return hs[i].ai.ID < hs[j].ai.ID
	})
	var out []peer.AddrInfo
	for _, h := range hs {
		if len(out) >= limit {
			break
		}
		if !h.sent {
			h.sent = true
			out = append(out, h.ai)
		}
	}
	return out
}
