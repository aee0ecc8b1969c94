package node

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/store"
)

// announcer provides, for every local root, the CID the node computed from
// its own bytes (store.Announced), and nothing else: never another member,
// never a root known only from peers. It follows the store's change feed,
// so a new or changed root is provided at once and a root that went is
// simply not provided again (its provider records expire by themselves),
// and it provides everything again every ReprovideInterval.
type announcer struct {
	st       *store.Store
	provide  func(ctx context.Context, c cid.Cid) error
	interval time.Duration
	log      *slog.Logger

	mu        sync.Mutex
	announced map[store.RootID]string // what each root is announced as
	queue     []string                // CIDs to provide, in order
	queued    map[string]bool
	wake      chan struct{}
	stats     ProvideStats
}

// errNoPeers: the routing table is empty, so there is nobody to provide to.
var errNoPeers = errors.New("no peers to provide to")

// ProvideStats are the announcer's counters.
type ProvideStats struct {
	Queued       int           `json:"queued"`
	Provided     int64         `json:"provided"`
	Failed       int64         `json:"failed"`
	LastCycle    time.Duration `json:"lastCycleNs"`
	LastCycleAt  time.Time     `json:"lastCycleAt,omitzero"`
	Announced    int           `json:"announced"`
	FeedResyncs  int64         `json:"feedResyncs"`
	LastProvided string        `json:"lastProvided,omitempty"`
}

func newAnnouncer(st *store.Store, provide func(context.Context, cid.Cid) error, interval time.Duration, log *slog.Logger) *announcer {
	return &announcer{st: st, provide: provide, interval: interval, log: log.With("component", "announce"),
		announced: map[store.RootID]string{}, queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Stats returns the counters.
func (a *announcer) Stats() ProvideStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Queued, s.Announced = len(a.queue), len(a.announced)
	return s
}

// run follows the feed and provides until ctx ends. workers provide in
// parallel.
func (a *announcer) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.worker(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.reprovide(ctx)
	}()
	a.follow(ctx)
	wg.Wait()
}

// follow reads the feed: first a full sweep (from the feed's head, so
// nothing that happens meanwhile is missed), then every key-set entry.
func (a *announcer) follow(ctx context.Context) {
	var f *store.Feed
	for ctx.Err() == nil {
		if f == nil {
			head, err := a.st.FeedHead(ctx)
			if err == nil {
				err = a.sweep(ctx)
			}
			if err != nil {
				a.pause(ctx, "sweep the store", err)
				continue
			}
			f = a.st.Feed(head)
		}
		evs, err := f.Next(ctx, 500, 2*time.Second)
		if errors.Is(err, store.ErrFeedTrimmed) {
			a.mu.Lock()
			a.stats.FeedResyncs++
			a.mu.Unlock()
			a.log.Warn("the change feed was trimmed past the announcer; sweeping the store again")
			f = nil
			continue
		}
		if err != nil {
			a.pause(ctx, "read the change feed", err)
			continue
		}
		for _, e := range evs {
			if e.KeySet() {
				a.check(ctx, e.Root)
			}
		}
	}
}

func (a *announcer) pause(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	a.log.Warn("cannot "+what+"; retrying", "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}

// sweep checks every root.
func (a *announcer) sweep(ctx context.Context) error {
	roots, err := a.st.RootIDs(ctx)
	if err != nil {
		return err
	}
	seen := make(map[store.RootID]bool, len(roots))
	for _, r := range roots {
		seen[r] = true
		a.check(ctx, r)
	}
	a.mu.Lock()
	for r := range a.announced {
		if !seen[r] {
			delete(a.announced, r)
		}
	}
	a.mu.Unlock()
	return nil
}

// check brings root's announcement in line with the store.
func (a *announcer) check(ctx context.Context, r store.RootID) {
	c, err := a.st.Announced(ctx, r)
	if err != nil {
		a.log.Warn("cannot read what a root announces", "err", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.announced[r]
	switch {
	case c == old:
		return
	case c == "":
		delete(a.announced, r)
	default:
		a.announced[r] = c
		a.enqueue(c)
	}
}

// enqueue adds c to the provide queue once; a.mu is held.
func (a *announcer) enqueue(c string) {
	if a.queued[c] {
		return
	}
	a.queued[c] = true
	a.queue = append(a.queue, c)
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Reprovide queues every announced CID again.
func (a *announcer) Reprovide() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.LastCycleAt = time.Now()
	for _, c := range a.announced {
		a.enqueue(c)
	}
}

func (a *announcer) reprovide(ctx context.Context) {
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			start := time.Now()
			a.Reprovide()
			a.log.Debug("reprovide cycle queued", "cids", a.Stats().Queued, "took", time.Since(start))
		}
	}
}

func (a *announcer) worker(ctx context.Context) {
	for {
		a.mu.Lock()
		var c string
		if len(a.queue) > 0 {
			c, a.queue = a.queue[0], a.queue[1:]
		}
		empty := len(a.queue) == 0
		cycle := a.stats.LastCycleAt
		a.mu.Unlock()
		if c == "" {
			select {
			case <-ctx.Done():
				return
			case <-a.wake:
				continue
			}
		}
		id, err := cid.Decode(c)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			err = a.provide(pctx, id)
			cancel()
		}
		a.mu.Lock()
		delete(a.queued, c)
		if errors.Is(err, errNoPeers) {
			// Nobody to tell yet: the node provides everything again when
			// its first peer shows up. Not a failure.
		} else if err != nil {
			a.stats.Failed++
			a.log.Debug("provide failed", "cid", c, "err", err)
		} else {
			a.stats.Provided++
			a.stats.LastProvided = c
		}
		if empty && !cycle.IsZero() {
			a.stats.LastCycle = time.Since(cycle)
		}
		a.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}
