package node

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/node/p2p"
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

// DHTView is what a node's DHT holds, for diagnostics: its mode, the
// peers of its routing table, the peers it is connected to, and which of
// keys (CIDs) its provider store holds records of, with their providers.
type DHTView struct {
	Mode      string
	Table     []string
	Connected int
	Held      map[string][]string
}

// ViewDHT returns the node's DHTView for keys. Call it after Start.
func (n *Node) ViewDHT(ctx context.Context, keys ...string) DHTView {
	d := n.p2p.DHT()
	v := DHTView{Mode: "client", Held: map[string][]string{}, Connected: len(n.p2p.Host().Network().Peers())}
	// The mode the DHT runs in now (Mode is the one configured): a
	// server handles the DHT protocol.
	for _, id := range n.p2p.Host().Mux().Protocols() {
		if strings.HasPrefix(string(id), p2p.DHTPrefix+"/kad/") {
			v.Mode = "server"
		}
	}
	for _, p := range d.RoutingTable().ListPeers() {
		v.Table = append(v.Table, p.String())
	}
	sort.Strings(v.Table)
	for _, k := range keys {
		id, err := cid.Decode(k)
		if err != nil {
			continue
		}
		ais, _ := d.ProviderStore().GetProviders(ctx, id.Hash())
		for _, ai := range ais {
			v.Held[k] = append(v.Held[k], ai.ID.String())
		}
	}
	return v
}
