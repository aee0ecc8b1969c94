package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/store"
)

// requestTimeout bounds the Redis calls of one API request, go-redis's
// retries included: a Redis that does not answer (stopped, swapping)
// gives a 503 after this long instead of holding the client for the
// read timeouts of every retry.
const requestTimeout = time.Second

// backend is the api.Backend of a node.
type backend struct{ n *Node }

// Meta answers from the local store and, unless local, the federation.
func (b *backend) Meta(ctx context.Context, cid string, local bool) (map[string]any, error) {
	return b.n.res.Meta(ctx, cid, local)
}

// Providers lists the peers the DHT returns for cid.
func (b *backend) Providers(ctx context.Context, cid string) ([]string, error) {
	return b.n.res.Providers(ctx, cid)
}

// Peers lists the connected peers.
func (b *backend) Peers(ctx context.Context) ([]api.Peer, error) {
	h := b.n.p2p.host
	out := []api.Peer{}
	for _, p := range h.Network().Peers() {
		pi := api.Peer{ID: p.String(), Addrs: []string{}}
		for _, c := range h.Network().ConnsToPeer(p) {
			pi.Addrs = append(pi.Addrs, c.RemoteMultiaddr().String())
		}
		if l := h.Peerstore().LatencyEWMA(p); l > 0 {
			pi.LatencyMs = float64(l.Microseconds()) / 1000
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func apiError(err error, cid string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: no file with CID %s", api.ErrNotFound, cid)
	case store.IsUnavailable(err):
		return redisDown(err)
	}
	return err
}

// redisDown is the error of a request whose Redis call got no answer.
func redisDown(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: redis is not answering (no reply within %s): %v", api.ErrUnavailable, requestTimeout, err)
	}
	return fmt.Errorf("%w: redis is not reachable: %v", api.ErrUnavailable, err)
}

func (b *backend) Status(ctx context.Context) (api.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	n := b.n
	ps := n.ann.Stats()
	st := api.Status{
		Version:      Version,
		PeerID:       n.p2p.host.ID().String(),
		Addrs:        n.p2p.Addrs(),
		Libraries:    n.cfg.Libraries,
		Scan:         n.ing.Progress(),
		Peers:        len(n.p2p.host.Network().Peers()),
		ProvideQueue: ps.Queued,
		Provide:      ps,
		HashQueue:    n.ing.QueueLen(),
		Redis:        api.RedisStatus{OK: true, Managed: n.st.Server() != nil},
	}
	if srv := n.st.Server(); srv != nil {
		st.Redis.Addr = srv.Addr()
	}
	roots, err := n.st.Roots(ctx)
	if err != nil {
		if store.IsUnavailable(err) {
			err = redisDown(err)
		}
		st.Redis.OK, st.Redis.Error = false, err.Error()
	}
	st.Roots = roots
	return st, nil
}

func (b *backend) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := b.n.st.Ping(ctx); err != nil {
		return redisDown(err)
	}
	switch s := b.n.ing.Progress().State; s {
	case ingest.StateWatching, ingest.StatePolling, ingest.StateIdle:
		return nil
	default:
		return fmt.Errorf("initial scan not finished (%s)", s)
	}
}
