package federation

import (
	"context"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// lookupNet is what a federated lookup needs of the network, and all it
// touches of it. dhtNet is a household's (its libp2p host, kad-dht and
// the record protocol); the tests' twin is a network of households in
// memory whose answers the test releases. Its methods are safe for
// concurrent use.
type lookupNet interface {
	// self is this household's peer ID.
	self() peer.ID
	// providers are the peers the DHT's walk names as providers of id, at
	// most count, each the moment the walk finds it (self too, when this
	// household provides id). The channel is closed when the walk is
	// over or ctx ends.
	providers(ctx context.Context, id cid.Cid, count int) <-chan peer.ID
	// connected are the peers this household is connected to now.
	connected() []peer.ID
	// routingTable are the peers in the DHT's routing table now.
	routingTable() []peer.ID
	// fetch asks p for its record of c and verifies it (as
	// recordService.fetch): errNoRecord when p has no file with c,
	// errRelayCut when a relay cut the answer off.
	fetch(ctx context.Context, p peer.ID, c string) (protocol.Record, error)
}

// dhtNet is lookupNet on a household's host, DHT and record protocol.
type dhtNet struct {
	p  *p2p.Net
	rs *recordService
}

func (n dhtNet) self() peer.ID { return n.p.Host().ID() }

// providers also keeps each provider's addresses from the walk for a
// minute, so that asking it dials them, past a backoff left by dials
// while it was away (p2p.LearnProvider).
func (n dhtNet) providers(ctx context.Context, id cid.Cid, count int) <-chan peer.ID {
	out := make(chan peer.ID)
	go func() {
		defer close(out)
		for ai := range n.p.DHT().FindProvidersAsync(ctx, id, count) {
			p2p.LearnProvider(n.p.Host(), ai, time.Minute)
			select {
			case out <- ai.ID:
			case <-ctx.Done():
				// The walk ends with ctx: its channel closes soon.
			}
		}
	}()
	return out
}

func (n dhtNet) connected() []peer.ID { return n.p.Host().Network().Peers() }

func (n dhtNet) routingTable() []peer.ID { return n.p.DHT().RoutingTable().ListPeers() }

func (n dhtNet) fetch(ctx context.Context, p peer.ID, c string) (protocol.Record, error) {
	return n.rs.fetch(ctx, p, c)
}
