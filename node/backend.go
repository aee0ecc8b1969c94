package node

import (
	"context"
	"errors"
	"fmt"
	"net"
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

// Meta answers from the local store. (The federation adds peers'
// answers behind the same call; until then local is all there is.)
func (b *backend) Meta(ctx context.Context, cid string, local bool) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	doc, err := b.n.st.DocumentByCID(ctx, cid)
	if err != nil {
		return nil, apiError(err, cid)
	}
	m := doc.Nested()
	m["source"] = "local"
	return m, nil
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
	st := api.Status{
		Version:   Version,
		Addrs:     []string{},
		Libraries: n.cfg.Libraries,
		Scan:      n.ing.Progress(),
		HashQueue: n.ing.QueueLen(),
		Redis:     api.RedisStatus{OK: true, Managed: n.st.Server() != nil},
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
