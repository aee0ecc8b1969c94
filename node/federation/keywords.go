package federation

import (
	"context"
	"sort"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/protocol"
)

// indexCandidates finds, on the DHT's keyword index, the households that
// hold a file with the words of query q, and sends them on the channel it
// returns, which closes when the lookups are over (or ctx ends).
//
// Each word that carries a key (protocol.Keyed) has its providers looked
// up, all at once, each up to searchIndexProviders. A household is sent as
// soon as it has been found providing every such word. When the lookups
// are over and a word's list was long (it reached searchIndexProviders,
// so holders may be missing from it), the households that provide every
// other word follow, those providing the most words first. A query with
// no keyed word sends nobody: its words only narrow what the asked
// households answer. The node itself is never sent.
func (ss *searchService) indexCandidates(ctx context.Context, q string) <-chan peer.AddrInfo {
	out := make(chan peer.AddrInfo)
	words := protocol.KeyedTokens(protocol.Tokens(q))
	if ss.providers == nil || len(words) == 0 {
		close(out)
		return out
	}
	type found struct {
		ai    peer.AddrInfo
		words map[int]bool
		sent  bool
	}
	var (
		mu    sync.Mutex
		seen  = map[peer.ID]*found{}
		long  = make([]bool, len(words))
		ready = make(chan peer.AddrInfo)
		wg    sync.WaitGroup
	)
	self := ss.h.ID()
	for i, w := range words {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for ai := range findNear(ctx, ss.providers, protocol.SearchTokenKey(w), searchIndexProviders, walkNearest) {
				n++
				if ai.ID == self {
					continue
				}
				mu.Lock()
				f := seen[ai.ID]
				if f == nil {
					f = &found{ai: ai, words: map[int]bool{}}
					seen[ai.ID] = f
				}
				f.ai.Addrs = append(f.ai.Addrs, ai.Addrs...)
				f.words[i] = true
				whole := !f.sent && len(f.words) == len(words)
				f.sent = f.sent || whole
				send := f.ai
				mu.Unlock()
				if whole {
					select {
					case ready <- send:
					case <-ctx.Done():
						return
					}
				}
			}
			mu.Lock()
			long[i] = n >= searchIndexProviders
			mu.Unlock()
		}()
	}
	go func() {
		wg.Wait()
		close(ready)
	}()
	go func() {
		defer close(out)
		for ai := range ready {
			select {
			case out <- ai:
			case <-ctx.Done():
				return
			}
		}
		// The lookups are over: those missing only long words.
		mu.Lock()
		var rest []*found
		for _, f := range seen {
			if f.sent {
				continue
			}
			ok := true
			for i := range words {
				if !long[i] && !f.words[i] {
					ok = false
					break
				}
			}
			if ok {
				rest = append(rest, f)
			}
		}
		mu.Unlock()
		sort.Slice(rest, func(i, j int) bool {
			if a, b := len(rest[i].words), len(rest[j].words); a != b {
				return a > b
			}
			return rest[i].ai.ID < rest[j].ai.ID
		})
		for _, f := range rest {
			select {
			case out <- f.ai:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
