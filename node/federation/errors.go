package federation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// RequestTimeout bounds the Redis calls of one API request, go-redis's
// retries included: a Redis that does not answer (stopped, swapping)
// gives a 503 after this long instead of holding the client for the read
// timeouts of every retry.
const RequestTimeout = time.Second

// APIError is err of a store read for cid as the API tells it: not found
// (404), Redis down (503), or as it is.
func APIError(err error, cid string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: no file with CID %s", model.ErrNotFound, cid)
	case store.IsUnavailable(err):
		return RedisDown(err)
	}
	return err
}

// RedisDown is the error of a request whose Redis call got no answer.
func RedisDown(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: redis is not answering (no reply within %s): %v", model.ErrUnavailable, RequestTimeout, err)
	}
	return fmt.Errorf("%w: redis is not reachable: %v", model.ErrUnavailable, err)
}
