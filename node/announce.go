package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/store"
)

// announcer gives the sweeping provider (provide.go), for every local
// root, the CID the node computed from its own bytes (store.Announced),
// and nothing else: never another member, never a root known only from
// peers. It follows the store's change feed, so a new or changed root is
// provided at once (StartProviding) and a root that went, or whose CID
// changed, stops being reprovided (StopProviding; its records expire by
// themselves). At start-up and after a feed trim it resyncs the whole key
// set from the store (ResetCids); the provider reprovides everything,
// region by region, every ReprovideInterval.
type announcer struct {
	st  *store.Store
	sw  *sweeper
	log *slog.Logger

	mu          sync.Mutex
	announced   map[store.RootID]string // what each root is announced as
	feedResyncs int64
	last        string
	stats       ProvideStats // as Stats last read them, at statsAt
	statsAt     time.Time
}

// ProvideStats are the provider's statistics, as /api/status.provide
// gives them.
type ProvideStats struct {
	// Keys are the CIDs in the provider's keystore; Regions the keyspace
	// regions they fall in, AvgPrefixLength those regions' mean prefix
	// length in bits.
	Keys            int64   `json:"keys"`
	Regions         int64   `json:"regions"`
	AvgPrefixLength float64 `json:"avgPrefixLength"` // -1 while not measured (offline)
	// NextReprovideAt is when the next region is reprovided.
	NextReprovideAt time.Time `json:"nextReprovideAt,omitzero"`
	// LastCycle is how long the regions reprovided in the last cycle took
	// in all (their mean duration times their number).
	LastCycle time.Duration `json:"lastCycleNs"`
	// Provided and Failed count keys since start (first provides and
	// reprovides), Walks the DHT walks, Messages the DHT messages the
	// provider sent.
	Provided int64 `json:"provided"`
	Failed   int64 `json:"failed"`
	Walks    int64 `json:"walks"`
	Messages int64 `json:"messages"`
	// Queued are keys waiting for their first provide.
	Queued int64 `json:"queued"`
	// Resumed: the start resumed a reprovide cycle persisted under the
	// data directory.
	Resumed bool `json:"resumed"`
	// Connectivity is the provider's view: online, disconnected (it
	// retries) or offline (no peers for a long time: keys wait).
	Connectivity string `json:"connectivity"`
	// Announced are the local roots with a CID to announce; FeedResyncs
	// the times the change feed was trimmed past the announcer (it then
	// resyncs the keystore from the store); LastProvided the CID most
	// recently handed to the provider.
	Announced    int    `json:"announced"`
	FeedResyncs  int64  `json:"feedResyncs"`
	LastProvided string `json:"lastProvided,omitempty"`
}

func newAnnouncer(st *store.Store, sw *sweeper, log *slog.Logger) *announcer {
	return &announcer{st: st, sw: sw, log: log.With("component", "announce"), announced: map[store.RootID]string{}}
}

// statsTTL is how long Stats reuses the provider's statistics: reading
// them walks the whole schedule, and the metrics read them field by field.
const statsTTL = 500 * time.Millisecond

// Stats returns the provider's statistics and the announcer's counters.
func (a *announcer) Stats() ProvideStats {
	a.mu.Lock()
	if time.Since(a.statsAt) < statsTTL {
		s := a.stats
		a.mu.Unlock()
		return s
	}
	s := ProvideStats{Announced: len(a.announced), FeedResyncs: a.feedResyncs, LastProvided: a.last}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.stats, a.statsAt = s, time.Now()
		a.mu.Unlock()
	}()
	s.Walks, s.Messages, s.Resumed = a.sw.walks.Load(), a.sw.messages.Load(), a.sw.resumed
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := a.sw.sp.Stats(ctx)
	if err != nil {
		return s
	}
	s.Keys, s.Regions, s.AvgPrefixLength = st.Schedule.Keys, st.Schedule.Regions, st.Schedule.AvgPrefixLength
	s.NextReprovideAt = st.Schedule.NextReprovideAt
	past := st.Operations.Past
	s.Provided, s.Failed = past.KeysProvided, past.KeysFailed
	s.LastCycle = past.RegionReprovideDuration * time.Duration(past.RegionReprovidedLastCycle)
	s.Queued = st.Queues.PendingKeyProvides
	s.Connectivity = st.Connectivity.Status
	return s
}

// run follows the feed and hands keys to the provider until ctx ends:
// first a full sweep (after reading the feed's head, so nothing that
// happens meanwhile is missed), then every key-set entry; a trim counts
// a resync and sweeps again.
func (a *announcer) run(ctx context.Context) {
	(&feedFollower{
		st: a.st, log: a.log, name: "the announcer",
		resync: a.sweep, resyncWhat: "sweep the store",
		trimmed: func() {
			a.mu.Lock()
			a.feedResyncs++
			a.mu.Unlock()
		},
		entries: func(ctx context.Context, evs []store.Event) {
			for _, e := range evs {
				if e.KeySet() {
					a.check(ctx, e.Root)
				}
			}
		},
	}).run(ctx)
}

// sweep reads what every root announces and makes it the provider's whole
// key set.
func (a *announcer) sweep(ctx context.Context) error {
	roots, err := a.st.RootIDs(ctx)
	if err != nil {
		return err
	}
	announced := make(map[store.RootID]string, len(roots))
	var want []cid.Cid
	for _, r := range roots {
		c, err := a.st.Announced(ctx, r)
		if err != nil {
			return err
		}
		id, err := cid.Decode(c)
		if c == "" || err != nil {
			continue
		}
		announced[r] = c
		want = append(want, id)
	}
	if err := a.sw.reset(ctx, want); err != nil {
		return err
	}
	a.mu.Lock()
	a.announced = announced
	a.mu.Unlock()
	a.log.Debug("provider keystore in step with the store", "cids", len(want))
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
	old := a.announced[r]
	if c == old {
		a.mu.Unlock()
		return
	}
	if c == "" {
		delete(a.announced, r)
	} else {
		a.announced[r] = c
	}
	a.mu.Unlock()
	// The provider's calls go through its keystore: not under a.mu, which
	// Stats takes.
	if old != "" {
		if id, err := cid.Decode(old); err == nil {
			if err := a.sw.stop(id); err != nil {
				a.log.Warn("cannot stop providing a CID", "cid", old, "err", err)
			}
		}
	}
	if c == "" {
		return
	}
	id, err := cid.Decode(c)
	if err != nil {
		return
	}
	if err := a.sw.start(id); err != nil {
		a.log.Warn("cannot provide a CID", "cid", c, "err", err)
		return
	}
	a.mu.Lock()
	a.last = c
	a.mu.Unlock()
}

// Reprovide provides every announced CID again at once, region by region
// (the node has a new address to tell: a relay reservation).
func (a *announcer) Reprovide(ctx context.Context) {
	if err := a.sw.again(ctx); err != nil {
		a.log.Warn("cannot provide again", "err", err)
	}
}
