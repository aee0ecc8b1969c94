package p2p

import (
	"context"
	"errors"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// bootstrapLoop keeps the node connected to its bootstrap peers: whenever
// it is not connected to one, it redials with backoff (1 s doubling to a
// minute), so a partition heals by itself.
func (p *Net) bootstrapLoop(ctx context.Context) {
	next := map[peer.ID]time.Time{}
	backoff := map[peer.ID]time.Duration{}
	warned := map[peer.ID]bool{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		for _, ai := range p.keep {
			// A peer reached through a relay (a bootstrap address that is
			// a /p2p-circuit one) counts as connected too.
			if c := p.host.Network().Connectedness(ai.ID); c == network.Connected || c == network.Limited {
				backoff[ai.ID] = 0
				continue
			}
			if now.Before(next[ai.ID]) {
				continue
			}
			err := p.redial(ctx, ai)
			if err != nil {
				b := max(backoff[ai.ID]*2, time.Second)
				backoff[ai.ID] = min(b, time.Minute)
				next[ai.ID] = time.Now().Add(backoff[ai.ID])
				args := []any{"peer", ai.ID, "addrs", ai.Addrs, "retry in", backoff[ai.ID], "err", dialReason(err)}
				if p.private {
					args = append(args, "hint", "with --swarm-key, a peer with another key or none cannot connect")
				}
				if !warned[ai.ID] {
					// Once per outage: a mistyped address or ID must not
					// stay silent, nor flood the log while a peer is away.
					p.log.Warn("cannot reach bootstrap peer; retrying with backoff", args...)
					warned[ai.ID] = true
				} else {
					p.log.Debug("bootstrap peer still not reachable", args...)
				}
				continue
			}
			p.log.Info("connected to bootstrap peer", "peer", ai.ID)
			warned[ai.ID] = false
			backoff[ai.ID] = 0
			// A fresh connection fills the routing table at once.
			go func() { _ = p.dht.Bootstrap(ctx) }()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// redial dials a peer the bootstrap loop keeps, past the swarm's own
// dial backoff: after kad-dht's dial to the peer, or the loop's last, the
// swarm would answer "dial backoff" without dialling. The loop keeps its
// own backoff, and its redial is a real one, whose reason it tells; a
// dial that still meets the swarm's backoff (kad-dht failed in between)
// is made once more.
func (p *Net) redial(ctx context.Context, ai peer.AddrInfo) error {
	var err error
	for range 2 {
		if sw, ok := p.host.Network().(*swarm.Swarm); ok {
			sw.Backoff().Clear(ai.ID)
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = p.host.Connect(dctx, ai)
		cancel()
		if !errors.Is(err, swarm.ErrDialBackoff) {
			break
		}
	}
	return err
}
