package announce

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Announcer gives the sweeping provider (provide.go) two kinds of keys
// and nothing else:
//
//   - for every local root, the CID the node computed from its own bytes
//     (store.Announced): never another member, never a root known only
//     from peers. It follows the store's change feed, so a new or changed
//     root is provided at once (StartProviding) and a root that went, or
//     whose CID changed, stops being reprovided (StopProviding; its
//     records expire by themselves);
//   - unless turned off (--search-index=false), the DHT key of every
//     search token the local files hold (protocol.SearchTokenKey of
//     store.KeyTokens), as the search indexer reports them root by root
//     (SetTokens) and after each of its sweeps (SweptTokens): a token is
//     provided when its first local root gains it and stopped when its
//     last one loses it.
//
// At start-up and after a feed trim it reads every root's CID again; once
// both the CIDs and the indexer's first sweep are known the provider's
// whole key set is reset to them (ResetCids), so keys nothing holds any
// more go. Until the indexer's first sweep is in, CIDs the keystore lacks
// are provided without removing anything. The provider reprovides
// everything, region by region, every ReprovideInterval.
type Announcer struct {
	st    *store.Store
	sw    *Sweeper
	log   *slog.Logger
	index bool // provide token keys

	// ks serializes what writes the keystore (a reset, a start, a stop)
	// with the maps it is read from; taken before mu.
	ks sync.Mutex

	mu          sync.Mutex
	announced   map[store.RootID]string   // what each root is announced as
	cidRefs     map[string]int            // CID → roots announcing it
	tokens      map[store.RootID][]string // each local root's key tokens
	refs        map[string]int            // token → local roots holding it
	cidsSwept   bool                      // announced was read from the store once
	tokensSwept bool                      // the indexer reported a whole sweep once
	feedResyncs int64
	last        string
	stats       Stats // as Stats last read them, at statsAt
	statsAt     time.Time
}

// Stats are the provider's statistics and the announcer's counters, as
// /api/status.provide gives them (the wire's type, model.ProvideStats).
type Stats = model.ProvideStats

// New announces on sw what st holds; index: the search token
// keys too.
func New(st *store.Store, sw *Sweeper, index bool, log *slog.Logger) *Announcer {
	a := &Announcer{st: st, sw: sw, index: index, log: log.With("component", "announce"),
		announced: map[store.RootID]string{}, cidRefs: map[string]int{}, tokens: map[store.RootID][]string{}, refs: map[string]int{}}
	sw.onRebuild(a.refill)
	return a
}

// refill puts back every key the announcer knows of into a keystore made
// anew while the node ran (its datastore was found damaged).
func (a *Announcer) refill() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a.ks.Lock()
	defer a.ks.Unlock()
	if err := a.reconcile(ctx); err != nil {
		a.log.Warn("provider store built anew: cannot put its keys back; they are at the next start", "err", err)
		return
	}
	a.log.Info("provider store built anew: its keys are back")
}

// statsTTL is how long Stats reuses the provider's statistics: reading
// them walks the whole schedule, and the metrics read them field by field.
const statsTTL = 500 * time.Millisecond

// Stats returns the provider's statistics and the announcer's counters.
func (a *Announcer) Stats() Stats {
	a.mu.Lock()
	if time.Since(a.statsAt) < statsTTL {
		s := a.stats
		a.mu.Unlock()
		return s
	}
	s := Stats{Announced: len(a.announced), FeedResyncs: a.feedResyncs, LastProvided: a.last,
		CIDKeys: len(a.cidRefs), TokenKeys: len(a.refs)}
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
	// Regions by the provider's mean prefix length: the whole keyspace
	// while it has none.
	s.RegionsProvided, s.Findable = a.sw.ledger.report(st.Schedule.AvgPrefixLength)
	s.Findable.CheckMessages = a.sw.checkMessages.Load()
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

// Run follows the feed and hands keys to the provider until ctx ends:
// first a full sweep (after reading the feed's head, so nothing that
// happens meanwhile is missed), then every key-set entry; a trim counts
// a resync and sweeps again. Beside it, it runs the findability check
// every CheckEvery while the provider is online (findable.go).
func (a *Announcer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { a.sw.runChecks(ctx, a.log) })
	(&FeedFollower{
		Store: a.st, Log: a.log, Name: "the announcer",
		Resync: a.sweep, ResyncWhat: "sweep the store",
		Trimmed: func() {
			a.mu.Lock()
			a.feedResyncs++
			a.mu.Unlock()
		},
		Entries: func(ctx context.Context, evs []store.Event) {
			for _, e := range evs {
				if e.KeySet() {
					a.check(ctx, e.Root)
				}
			}
		},
	}).Run(ctx)
}

// sweep reads what every root announces and brings the keystore in step.
func (a *Announcer) sweep(ctx context.Context) error {
	roots, err := a.st.RootIDs(ctx)
	if err != nil {
		return err
	}
	all, err := a.st.AnnouncedMany(ctx, roots)
	if err != nil {
		return err
	}
	announced := make(map[store.RootID]string, len(all))
	for r, c := range all {
		if _, err := cid.Decode(c); c == "" || err != nil {
			continue
		}
		announced[r] = c
	}
	a.ks.Lock()
	defer a.ks.Unlock()
	cidRefs := map[string]int{}
	for _, c := range announced {
		cidRefs[c]++
	}
	a.mu.Lock()
	a.announced, a.cidRefs, a.cidsSwept = announced, cidRefs, true
	a.mu.Unlock()
	return a.reconcile(ctx)
}

// SweptTokens takes every local root's key tokens, from a whole sweep of
// the search indexer, and brings the keystore in step.
func (a *Announcer) SweptTokens(ctx context.Context, all map[store.RootID][]string) error {
	if !a.index {
		return nil
	}
	a.ks.Lock()
	defer a.ks.Unlock()
	refs := map[string]int{}
	for _, toks := range all {
		for _, t := range toks {
			refs[t]++
		}
	}
	a.mu.Lock()
	a.tokens, a.refs, a.tokensSwept = all, refs, true
	a.mu.Unlock()
	return a.reconcile(ctx)
}

// reconcile makes the keystore what the maps say, under a.ks: the whole
// key set once both the CIDs and the tokens were swept; before the
// tokens, the CIDs it lacks only (what it holds stays: token keys of the
// last run among them); nothing before the CIDs.
func (a *Announcer) reconcile(ctx context.Context) error {
	a.mu.Lock()
	cidsSwept, whole := a.cidsSwept, a.tokensSwept || !a.index
	var want []cid.Cid
	for c := range a.cidRefs {
		if id, err := cid.Decode(c); err == nil {
			want = append(want, id)
		}
	}
	cids := len(want)
	if a.index {
		for t := range a.refs {
			want = append(want, protocol.SearchTokenKey(t))
		}
	}
	a.mu.Unlock()
	switch {
	case !cidsSwept:
		return nil
	case !whole:
		return a.sw.add(want)
	}
	if err := a.sw.reset(ctx, want); err != nil {
		return err
	}
	a.log.Debug("provider keystore in step with the store", "cids", cids, "tokens", len(want)-cids)
	return nil
}

// SetTokens takes root's key tokens now (none: it is gone, or not a local
// file): a token its first root gains is provided, one its last root
// loses is stopped. Before the indexer's first whole sweep it only
// notes them (the sweep's reset provides them).
func (a *Announcer) SetTokens(root store.RootID, toks []string) {
	if !a.index {
		return
	}
	a.ks.Lock()
	defer a.ks.Unlock()
	a.mu.Lock()
	old := a.tokens[root]
	if slices.Equal(old, toks) {
		a.mu.Unlock()
		return
	}
	if len(toks) == 0 {
		delete(a.tokens, root)
	} else {
		a.tokens[root] = toks
	}
	var gained, lost []string
	for _, t := range toks {
		if a.refs[t]++; a.refs[t] == 1 {
			gained = append(gained, t)
		}
	}
	for _, t := range old {
		if a.refs[t]--; a.refs[t] == 0 {
			delete(a.refs, t)
			lost = append(lost, t)
		}
	}
	live := a.tokensSwept && a.cidsSwept
	a.mu.Unlock()
	if !live {
		return
	}
	for _, t := range lost {
		if err := a.sw.stop(protocol.SearchTokenKey(t)); err != nil {
			a.log.Warn("cannot stop providing a search token key", "token", t, "err", err)
		}
	}
	for _, t := range gained {
		if err := a.sw.start(protocol.SearchTokenKey(t)); err != nil {
			a.log.Warn("cannot provide a search token key", "token", t, "err", err)
		}
	}
}

// check brings root's announcement in line with the store.
func (a *Announcer) check(ctx context.Context, r store.RootID) {
	c, err := a.st.Announced(ctx, r)
	if err != nil {
		a.log.Warn("cannot read what a root announces", "err", err)
		return
	}
	a.ks.Lock()
	defer a.ks.Unlock()
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
		a.cidRefs[c]++
	}
	still := 0
	if old != "" {
		a.cidRefs[old]--
		if still = a.cidRefs[old]; still == 0 {
			delete(a.cidRefs, old)
		}
	}
	a.mu.Unlock()
	// The provider's calls go through its keystore: not under a.mu, which
	// Stats takes. A CID another root still announces stays.
	if old != "" && still == 0 {
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
func (a *Announcer) Reprovide(ctx context.Context) {
	if err := a.sw.again(ctx); err != nil {
		a.log.Warn("cannot provide again", "err", err)
	}
}

// Close stops the provider and closes its keystore and datastore; Run
// must have returned.
func (a *Announcer) Close() error { return a.sw.close() }
