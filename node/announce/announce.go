package announce

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Announcer gives the sweeping provider (provide.go) two kinds of keys
// and nothing else, from the batches of changed roots store.Changes hands
// it (Take):
//
//   - for every local root, the CID the node computed from its own bytes
//     (store.Changed.Announced): never another member, never a root known
//     only from peers. A new or changed root is provided at once
//     (StartProviding); a root that went, or whose CID changed, stops
//     being reprovided (StopProviding; its records expire by themselves);
//   - unless turned off (--search-index=false), the DHT key of every
//     search token the local files hold (protocol.SearchTokenKey of
//     search.KeyTokens of the root's document, read in the same batch): a token is provided when
//     its first local root gains it and stopped when its last one loses
//     it.
//
// A sweep's batches (at start, after a feed trim) are gathered and, at
// its last, the provider's whole key set is reset to them (ResetCids), so
// keys nothing holds any more go. Before the first sweep ends, a change
// is only noted. The provider reprovides everything, region by region,
// every ReprovideInterval.
type Announcer struct {
	sw    *Sweeper
	log   *slog.Logger
	index bool // provide token keys
	// private says a local file is private (privacy.Rules.Private of
	// its path): it is provided as a root that went. nil: none is.
	private func(path string) bool

	// ks serializes what writes the keystore (a reset, a start, a stop)
	// with the maps it is read from; taken before mu.
	ks sync.Mutex

	mu          sync.Mutex
	announced   map[store.RootID]string   // what each root is announced as
	cidRefs     map[string]int            // CID → roots announcing it
	tokens      map[store.RootID][]string // each local root's key tokens
	refs        map[string]int            // token → local roots holding it
	swept       bool                      // a whole sweep was taken once
	feedResyncs int64
	last        string
	stats       Stats // as Stats last read them, at statsAt
	statsAt     time.Time

	// sweeping is the sweep being taken, nil between sweeps (Take's
	// goroutine only).
	sweeping *sweepKeys
}

// sweepKeys are a sweep's roots' CIDs and key tokens, gathered batch by
// batch.
type sweepKeys struct {
	announced map[store.RootID]string
	tokens    map[store.RootID][]string
}

// Stats are the provider's statistics and the announcer's counters, as
// /api/status.provide gives them (the wire's type, model.ProvideStats).
type Stats = model.ProvideStats

// New announces on sw what the batches it takes hold; index: the search
// token keys too. private, when not nil, says which local files are
// private (by path): they are neither announced nor give words.
func New(sw *Sweeper, index bool, private func(path string) bool, log *slog.Logger) *Announcer {
	a := &Announcer{sw: sw, index: index, private: private, log: log.With("component", "announce"),
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

// Run runs the findability check every CheckEvery while the provider
// is online (findable.go), until ctx ends.
func (a *Announcer) Run(ctx context.Context) { a.sw.runChecks(ctx, a.log) }

// Take brings the provider's keys in step with one batch of changed
// roots (a store.Consumer): each root's announced CID and its key tokens.
// A sweep's batches are gathered, and its last makes them the whole key
// set.
func (a *Announcer) Take(ctx context.Context, b store.ChangeBatch) error {
	if b.Sweep {
		return a.takeSweep(ctx, b)
	}
	for _, c := range b.Roots {
		c = a.withheld(c)
		a.check(c.Root, c.Announced)
		if a.index {
			a.setTokens(c.Root, tokensOf(c))
		}
	}
	return nil
}

// withheld is c as the announcer takes it: a private local file as a
// root that went (nothing announced, no words).
func (a *Announcer) withheld(c store.Changed) store.Changed {
	if a.private != nil && c.Exists && c.Document.Local() && a.private(c.Document.FilePath()) {
		return store.Changed{Root: c.Root}
	}
	return c
}

// tokensOf are c's key tokens: none for a root gone.
func tokensOf(c store.Changed) []string {
	if !c.Exists {
		return nil
	}
	return search.KeyTokens(c.Document)
}

// Consumer is the announcer as store.Changes takes it: a write to a
// field its key tokens are read from (search.KeyField) has the root read
// again, when it provides token keys; its announced CIDs change with the
// key-sets, which the change feed names.
func (a *Announcer) Consumer() store.Consumer {
	return store.Consumer{Name: "the announcer", Fields: func(f string) bool { return a.index && search.KeyField(f) }, Take: a.Take}
}

// takeSweep gathers a sweep's batch; at its last, what it gathered
// replaces the announcer's maps and the keystore is reset to them.
func (a *Announcer) takeSweep(ctx context.Context, b store.ChangeBatch) error {
	if b.First || a.sweeping == nil {
		a.sweeping = &sweepKeys{announced: map[store.RootID]string{}, tokens: map[store.RootID][]string{}}
	}
	sk := a.sweeping
	for _, c := range b.Roots {
		c = a.withheld(c)
		if _, err := cid.Decode(c.Announced); c.Announced != "" && err == nil {
			sk.announced[c.Root] = c.Announced
		}
		if !a.index {
			continue
		}
		if toks := tokensOf(c); len(toks) > 0 {
			sk.tokens[c.Root] = toks
		}
	}
	if !b.Last {
		return nil
	}
	a.sweeping = nil
	cidRefs := map[string]int{}
	for _, c := range sk.announced {
		cidRefs[c]++
	}
	refs := map[string]int{}
	for _, toks := range sk.tokens {
		for _, t := range toks {
			refs[t]++
		}
	}
	a.ks.Lock()
	defer a.ks.Unlock()
	a.mu.Lock()
	a.announced, a.cidRefs, a.tokens, a.refs, a.swept = sk.announced, cidRefs, sk.tokens, refs, true
	if b.Resync {
		a.feedResyncs++
	}
	a.mu.Unlock()
	return a.reconcile(ctx)
}

// reconcile makes the keystore what the maps say, under a.ks, once a
// whole sweep was taken.
func (a *Announcer) reconcile(ctx context.Context) error {
	a.mu.Lock()
	swept := a.swept
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
	if !swept {
		return nil
	}
	if err := a.sw.reset(ctx, want); err != nil {
		return err
	}
	a.log.Debug("provider keystore in step with the store", "cids", cids, "tokens", len(want)-cids)
	return nil
}

// setTokens takes root's key tokens now (none: it is gone, or not a local
// file): a token its first root gains is provided, one its last root
// loses is stopped. Before the first whole sweep it only notes them (the
// sweep's reset provides them).
func (a *Announcer) setTokens(root store.RootID, toks []string) {
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
	live := a.swept
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

// check brings root r's announcement in line with c, what the store now
// announces for it ("" none). Before the first whole sweep it only notes
// it (the sweep's reset provides it).
func (a *Announcer) check(r store.RootID, c string) {
	if _, err := cid.Decode(c); err != nil {
		c = ""
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
	live := a.swept
	a.mu.Unlock()
	if !live {
		return
	}
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
