package node

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/metamesh/node/store"
)

// The change-feed reads of a feedFollower, and how long anything that
// failed on Redis waits before it tries again.
const (
	feedBatch  = 500
	feedBlock  = 2 * time.Second
	retryPause = time.Second
)

// feedFollower is the loop the announcer and the search indexer follow
// the store's change feed (meta:events) with. It reads the feed's head,
// calls resync (which brings the follower in step with the whole store),
// then hands every batch read from the head on to entries, in order.
// When the capped stream was trimmed past its position
// (store.ErrFeedTrimmed: entries were lost to it) it calls trimmed, logs,
// and starts over: a new head, resync again. A Redis error, reading the
// feed or the head or from resync, is logged and paused on (retryPause)
// before it tries again. It runs on the caller's goroutine until ctx ends;
// the callbacks run on it too.
type feedFollower struct {
	st  *store.Store
	log *slog.Logger
	// name is who follows, for the trim warning ("the announcer").
	name string
	// resync runs after the head was read, before following from it: at
	// start and after every trim. resyncWhat names that step (reading the
	// head included) in the warning when it fails.
	resync     func(ctx context.Context) error
	resyncWhat string
	// trimmed, when set, runs when the feed was trimmed past the
	// follower, before the resync.
	trimmed func()
	// entries handles one batch of entries (never empty).
	entries func(ctx context.Context, evs []store.Event)
}

// run follows the feed until ctx ends.
func (ff *feedFollower) run(ctx context.Context) {
	var f *store.Feed
	for ctx.Err() == nil {
		if f == nil {
			head, err := ff.st.FeedHead(ctx)
			if err == nil {
				err = ff.resync(ctx)
			}
			if err != nil {
				pause(ctx, ff.log, ff.resyncWhat, err)
				continue
			}
			f = ff.st.Feed(head)
		}
		evs, err := f.Next(ctx, feedBatch, feedBlock)
		if errors.Is(err, store.ErrFeedTrimmed) {
			if ff.trimmed != nil {
				ff.trimmed()
			}
			ff.log.Warn("the change feed was trimmed past " + ff.name + "; sweeping the store again")
			f = nil
			continue
		}
		if err != nil {
			pause(ctx, ff.log, "read the change feed", err)
			continue
		}
		if len(evs) > 0 {
			ff.entries(ctx, evs)
		}
	}
}

// pause logs that what failed and waits retryPause, or until ctx ends
// (then it logs nothing: the error is the context's).
func pause(ctx context.Context, log *slog.Logger, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	log.Warn("cannot "+what+"; retrying", "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(retryPause):
	}
}
