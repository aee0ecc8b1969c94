package announce

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/metamesh/node/store"
)

// The change-feed reads of a FeedFollower, and how long anything that
// failed on Redis waits before it tries again.
const (
	feedBatch  = 500
	feedBlock  = 2 * time.Second
	RetryPause = time.Second
)

// FeedFollower is the loop the announcer and the search indexer follow
// the store's change feed (meta:events) with. It reads the feed's head,
// calls Resync (which brings the follower in step with the whole store),
// then hands every batch read from the head on to Entries, in order.
// When the capped stream was trimmed past its position
// (store.ErrFeedTrimmed: entries were lost to it) it calls Trimmed, logs,
// and starts over: a new head, resync again. A Redis error, reading the
// feed or the head or from Resync, is logged and paused on (RetryPause)
// before it tries again. It runs on the caller's goroutine until ctx ends;
// the callbacks run on it too.
type FeedFollower struct {
	Store *store.Store
	Log   *slog.Logger
	// Name is who follows, for the trim warning ("the announcer").
	Name string
	// Resync runs after the head was read, before following from it: at
	// start and after every trim. ResyncWhat names that step (reading the
	// head included) in the warning when it fails.
	Resync     func(ctx context.Context) error
	ResyncWhat string
	// Trimmed, when set, runs when the feed was trimmed past the
	// follower, before the resync.
	Trimmed func()
	// Entries handles one batch of entries (never empty).
	Entries func(ctx context.Context, evs []store.Event)
}

// Run follows the feed until ctx ends.
func (ff *FeedFollower) Run(ctx context.Context) {
	var f *store.Feed
	for ctx.Err() == nil {
		if f == nil {
			head, err := ff.Store.FeedHead(ctx)
			if err == nil {
				err = ff.Resync(ctx)
			}
			if err != nil {
				Pause(ctx, ff.Log, ff.ResyncWhat, err)
				continue
			}
			f = ff.Store.Feed(head)
		}
		evs, err := f.Next(ctx, feedBatch, feedBlock)
		if errors.Is(err, store.ErrFeedTrimmed) {
			if ff.Trimmed != nil {
				ff.Trimmed()
			}
			ff.Log.Warn("the change feed was trimmed past " + ff.Name + "; sweeping the store again")
			f = nil
			continue
		}
		if err != nil {
			Pause(ctx, ff.Log, "read the change feed", err)
			continue
		}
		if len(evs) > 0 {
			ff.Entries(ctx, evs)
		}
	}
}

// Pause logs that what failed and waits RetryPause, or until ctx ends
// (then it logs nothing: the error is the context's).
func Pause(ctx context.Context, log *slog.Logger, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	log.Warn("cannot "+what+"; retrying", "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(RetryPause):
	}
}
