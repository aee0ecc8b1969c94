package node

import (
	"context"
	"fmt"
	"sort"

	"github.com/ipfs/go-cid"
)

// FindProviders asks the DHT, and nothing else, for providers of c: no
// store, no negative cache, no fan-out, no record protocol. It is the bare
// kad-dht cost a federated lookup builds on, for benchmarks and
// diagnostics. count <= 0 runs kad-dht's FindProviders (up to its bucket
// size, 20, so the query runs to its end); count 1 stops at the first
// provider. Call it after Start.
func (n *Node) FindProviders(ctx context.Context, c string, count int) ([]string, error) {
	id, err := cid.Decode(c)
	if err != nil {
		return nil, fmt.Errorf("find providers: %w", err)
	}
	out := []string{}
	if count <= 0 {
		ais, err := n.p2p.DHT().FindProviders(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("find providers of %s: %w", c, err)
		}
		for _, ai := range ais {
			out = append(out, ai.ID.String())
		}
	} else {
		for ai := range n.p2p.DHT().FindProvidersAsync(ctx, id, count) {
			out = append(out, ai.ID.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
