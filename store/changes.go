package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limits of Changes.
const (
	// changesBatch is how many roots one batch holds, read in one round
	// trip (ReadChanged).
	changesBatch = 1000
	// feedBatch and feedBlock are one read of the change feed.
	feedBatch = 500
	feedBlock = 2 * time.Second
	// RetryPause is how long anything that failed on Redis waits before
	// it tries again.
	RetryPause = time.Second
)

// Changed is what the node keeps in step with the store needs of one
// root, read once for all of them: whether it exists, the CID the node
// announces for it (Announced: "" for none) and its Document, from which
// each consumer computes what it keeps (the search index its text, the
// catalog its entry, the announcer its key tokens). Exists is false, and
// Document empty, when the root is gone.
type Changed struct {
	Root      RootID
	Exists    bool
	Announced string
	Document  Document
	// Own are the digests of the root's own bytes (Store.Own), of which
	// Announced is the canonical.
	Own Hashes
}

// ChangeBatch is one batch of changed roots Changes hands its consumers.
// A sweep hands every root of the store, in batches, the first one marked
// First and the last one Last: what a consumer keeps of a root no batch
// of the sweep named is gone. A sweep handed again (one of its batches
// failed) starts again at a First. Resync says the sweep follows a trim
// of the change feed (entries were lost to it).
type ChangeBatch struct {
	Roots              []Changed
	Sweep, First, Last bool
	Resync             bool
}

// Consumer takes one batch. An error is logged, paused on (RetryPause),
// and the batch's roots are handed again (a sweep's batch: the whole
// sweep), to every consumer: consumers keep sets, so a batch taken twice
// changes nothing.
type Consumer struct {
	// Name is who consumes, in the log ("the search index").
	Name string
	// Fields reports whether a write to field f of a root changes what
	// the consumer keeps of it: a keyspace notification of file:<root>/f
	// queues the root only when some consumer's Fields(f) is true. A
	// peer's claim (origin/<peer>/<field>) is asked by its own name
	// (FieldName). Nil: every field. The change feed's entries (key-set
	// changes, mints, merges, deletes) queue their roots whatever Fields
	// says.
	Fields func(f string) bool
	Take   func(ctx context.Context, b ChangeBatch) error
}

// FieldName is the name field f of a root counts by for a Consumer's
// Fields: a peer's claim, origin/<peer>/<name>, by its name; any other
// field as it is.
func FieldName(f string) string {
	if rest, ok := strings.CutPrefix(f, OriginPrefix+"/"); ok {
		if _, name, ok := strings.Cut(rest, "/"); ok {
			return name
		}
	}
	return f
}

// Changes is the one follower of what changes in the store, for all the
// node keeps in step with it (the announcer's keys, the search index, the
// catalog). It reads the change feed (meta:events: key-set changes,
// mints, merges, deletes) and the keyspace notifications of file:* (any
// writer's fields: Follow's work is done on them first, so the field
// index is in step before a root is read), and hands its consumers, in
// order on one goroutine, batches of the roots that changed, each read
// once (ReadChanged: changesBatch roots per round trip). A sweep of every
// root runs at start (once the feed's head is read and the subscription
// is in place, so nothing that happens meanwhile is missed), after the
// feed was trimmed past it, after the subscription was lost (the field
// index is repaired first), and when a consumer asks (Sweep).
type Changes struct {
	s         *Store
	log       *slog.Logger
	consumers []Consumer

	// afterRead, when set (by a test), runs after every read of the
	// feed that brought entries, before they are queued.
	afterRead func()

	mu      sync.Mutex
	pending map[RootID]bool
	sweep   bool
	resync  bool
	wake    chan struct{}
}

// Changes makes the follower of s's changes for consumers; Run runs it.
func (s *Store) Changes(consumers ...Consumer) *Changes {
	return &Changes{s: s, log: s.log.With("component", "changes"), consumers: consumers,
		pending: map[RootID]bool{}, wake: make(chan struct{}, 1)}
}

// Sweep asks for a sweep of every root (a consumer that lost what it kept:
// a search index made anew).
func (c *Changes) Sweep() {
	c.mu.Lock()
	c.sweep = true
	c.mu.Unlock()
	c.poke()
}

// Run follows the store until ctx ends.
func (c *Changes) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.followFeed(ctx) })
	wg.Go(func() { c.watch(ctx) })
	c.deliver(ctx)
	wg.Wait()
}

func (c *Changes) add(roots ...RootID) {
	c.mu.Lock()
	for _, r := range roots {
		if r != "" {
			c.pending[r] = true
		}
	}
	c.mu.Unlock()
	c.poke()
}

func (c *Changes) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// followFeed reads the change feed from its head, a sweep asked for once
// the head is read; a trim asks for a sweep again (a resync), marked as
// such together with it, once the new head is read.
func (c *Changes) followFeed(ctx context.Context) {
	var f *Feed
	resync := false
	for ctx.Err() == nil {
		if f == nil {
			head, err := c.s.FeedHead(ctx)
			if err != nil {
				Pause(ctx, c.log, "read the change feed's head", err)
				continue
			}
			f = c.s.Feed(head)
			c.mu.Lock()
			c.sweep, c.resync = true, c.resync || resync
			c.mu.Unlock()
			c.poke()
			resync = false
		}
		evs, err := f.Next(ctx, feedBatch, feedBlock)
		if errors.Is(err, ErrFeedTrimmed) {
			c.log.Warn("the change feed was trimmed past the node; sweeping the store again")
			resync, f = true, nil
			continue
		}
		if err != nil {
			Pause(ctx, c.log, "read the change feed", err)
			continue
		}
		if len(evs) > 0 && c.afterRead != nil {
			c.afterRead()
		}
		for _, e := range evs {
			c.add(e.Root, e.Into)
		}
	}
}

// watch follows the keyspace notifications of file:*: each batch of keys
// is tracked into the field index (Follow's work), then the roots whose
// fields some consumer takes (Consumer.Fields) were named are queued.
// Once subscribed, Following is closed; after the subscription was lost
// it subscribes again, repairs the field index and sweeps.
func (c *Changes) watch(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		again := !first
		first = false
		err := c.s.watchFileKeys(ctx, func() error {
			c.s.followingOnce.Do(func() { close(c.s.following) })
			if !again {
				return nil
			}
			rep, err := c.s.Repair(ctx, false)
			if err != nil {
				return err
			}
			if rep.Listed+rep.Unlisted > 0 {
				c.log.Info("field index repaired after reconnecting", "listed", rep.Listed, "unlisted", rep.Unlisted)
			}
			c.Sweep()
			return nil
		}, func(keys []string) error {
			if _, err := c.s.track(ctx, keys, false); err != nil {
				if IsUnavailable(err) {
					return err
				}
				c.log.Warn("cannot track outside writes", "err", err)
			}
			c.add(fieldRoots(keys, c.wants)...)
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		Pause(ctx, c.log, "follow field writes", err)
	}
}

// wants reports whether some consumer's Fields takes field f (a name
// FieldName gave).
func (c *Changes) wants(f string) bool {
	for _, k := range c.consumers {
		if k.Fields == nil || k.Fields(f) {
			return true
		}
	}
	return false
}

// fieldRoots are the roots of keys whose fields want reports, by the
// name FieldName gives them, once each.
func fieldRoots(keys []string, want func(string) bool) []RootID {
	seen := map[RootID]bool{}
	var roots []RootID
	for _, k := range keys {
		r, f, ok := strings.Cut(strings.TrimPrefix(k, "file:"), "/")
		if ok && !seen[RootID(r)] && want(FieldName(f)) {
			seen[RootID(r)] = true
			roots = append(roots, RootID(r))
		}
	}
	return roots
}

// deliver hands the queued roots, and the sweeps asked for, to the
// consumers until ctx ends.
func (c *Changes) deliver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		sweep, resync := c.sweep, c.resync
		c.sweep, c.resync = false, false
		roots := make([]RootID, 0, len(c.pending))
		for r := range c.pending {
			roots = append(roots, r)
		}
		clear(c.pending)
		c.mu.Unlock()
		var err error
		if sweep {
			err = c.sweepAll(ctx, resync)
		}
		if err == nil {
			err = c.hand(ctx, roots, ChangeBatch{})
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.sweep, c.resync = c.sweep || sweep, c.resync || resync
		c.mu.Unlock()
		c.add(roots...)
		Pause(ctx, c.log, "bring the node in step with the store", err)
	}
}

// sweepAll hands every root, in batches, the last one marked.
func (c *Changes) sweepAll(ctx context.Context, resync bool) error {
	all, err := c.s.RootIDs(ctx)
	if err != nil {
		return err
	}
	return c.hand(ctx, all, ChangeBatch{Sweep: true, Resync: resync})
}

// hand reads roots, changesBatch at a time, and hands each batch, shaped
// as like says, to every consumer; a sweep's last batch is marked (an
// empty store's sweep is one empty batch). A consumer's error ends it.
func (c *Changes) hand(ctx context.Context, roots []RootID, like ChangeBatch) error {
	for i := 0; i < len(roots) || (like.Sweep && i == 0); i += changesBatch {
		part := roots[i:min(len(roots), i+changesBatch)]
		read, err := c.s.ReadChanged(ctx, part)
		if err != nil {
			return err
		}
		b := like
		b.Roots = read
		b.First = like.Sweep && i == 0
		b.Last = like.Sweep && i+changesBatch >= len(roots)
		for _, k := range c.consumers {
			if err := k.Take(ctx, b); err != nil {
				return fmt.Errorf("%s: %w", k.Name, err)
			}
		}
	}
	return nil
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

// ReadChanged reads what the node keeps of each of roots (Changed), in
// one round trip per changesBatch roots (a pipeline of each root's
// fields and its document script), in the order of roots.
func (s *Store) ReadChanged(ctx context.Context, roots []RootID) ([]Changed, error) {
	out := make([]Changed, 0, len(roots))
	for i := 0; i < len(roots); i += changesBatch {
		part, err := s.readChanged(ctx, roots[i:min(len(roots), i+changesBatch)])
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

func (s *Store) readChanged(ctx context.Context, roots []RootID) ([]Changed, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	// The script is loaded first: a pipeline cannot fall back from
	// EVALSHA to EVAL (a Redis restarted since the last load).
	if err := luaDocument.sc.Load(ctx, s.rdb).Err(); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	own := make([]*redis.MapStringStringCmd, len(roots))
	docs := make([]*redis.Cmd, len(roots))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range roots {
			own[i] = p.HGetAll(ctx, fieldsKey(r))
			docs[i] = luaDocument.sc.EvalSha(ctx, p, nil, luaDocument.args(s, documentArgs{root: r, maxDuplicates: MaxDuplicates})...)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("store: read changed roots: %w", err)
	}
	out := make([]Changed, len(roots))
	for i, r := range roots {
		out[i].Root = r
		d, err := luaDocument.decode(docs[i])
		switch {
		case errors.Is(err, redis.Nil):
			continue // gone
		case err != nil:
			return nil, fmt.Errorf("store: read document: %w", err)
		}
		d.Root = r
		out[i].Own = digestsOf(own[i].Val())
		out[i].Announced = out[i].Own.Canonical()
		out[i].Exists, out[i].Document = true, d
	}
	return out, nil
}
