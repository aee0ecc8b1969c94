package ingest

import (
	"context"
	"log/slog"
	"time"

	"github.com/metamesh/node/store"
)

// retry runs fn until it succeeds, fails for good, or ctx ends. While
// Redis is unreachable ingest pauses with exponential backoff and resumes
// where it stopped; nothing is lost.
func (in *Ingester) retry(ctx context.Context, what string, fn func() error) error {
	backoff := 100 * time.Millisecond
	failing := false
	for {
		err := fn()
		if !store.IsUnavailable(err) {
			if failing {
				in.log.Info("redis is back; ingest resumed", "op", what)
			}
			return err
		}
		if !failing {
			in.log.Warn("redis unavailable; ingest paused", "op", what, "err", err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// retryGet is retry for a call that returns a value.
func retryGet[T any](ctx context.Context, in *Ingester, what string, fn func() (T, error)) (T, error) {
	var v T
	err := in.retry(ctx, what, func() (err error) {
		v, err = fn()
		return err
	})
	return v, err
}

// note logs a per-file line at Debug, with what the store did
// (result); applied records the change for the lines at Info.
func (in *Ingester) note(msg string, args ...any) {
	in.log.Log(context.Background(), slog.LevelDebug, msg, args...)
}
