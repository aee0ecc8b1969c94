package federation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ipfs/go-datastore"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/node/handoff"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/node/search"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// HouseholdConfig configures a Household: the federation side of a node
// on a host and a store its caller made.
type HouseholdConfig struct {
	// Net is a node's host and DHT (p2p.Start), the household runs on
	// them; nil: Host, with a DHT server the Household makes.
	Net *p2p.Net
	// Host is the libp2p host (any: a real one, or go-libp2p's mocknet)
	// when Net is nil; the Household does not close it. Key is the
	// host's identity key, which signs records and search answers.
	Host host.Host
	Key  crypto.PrivKey
	// Store is the household's store; the Household does not close it.
	Store *store.Store
	// ProviderDir holds the sweeping provider's keystore and schedule (a
	// pebble database), unless ProviderStore is set: then they are kept
	// there (a simulation keeps them in memory).
	ProviderDir   string
	ProviderStore datastore.Batching
	// ReprovideInterval, ProviderRecordTTL (with Host: for the DHT it
	// makes), LookupTimeout and PeerRecordTTL are as in node.Config; zero
	// takes the defaults above (kad-dht's for ProviderRecordTTL).
	ReprovideInterval time.Duration
	ProviderRecordTTL time.Duration
	LookupTimeout     time.Duration
	PeerRecordTTL     time.Duration
	// Bootstrap peers seed the DHT's routing table.
	Bootstrap []peer.AddrInfo
	// Name is the household's name, sent in its records and search
	// answers (node.Config.Name); it must pass protocol.CheckName. ""
	// sends none.
	Name string
	// NoSearchIndex: provide no search token keys (Config.NoSearchIndex).
	NoSearchIndex bool
	// SearchDir holds the search index (search.TextIndex), built anew
	// when missing; "" keeps it in memory (a simulation).
	SearchDir string
	// Private, when set, says which local files are private, by path
	// (privacy.Rules.Private): they are not announced (no provider
	// record, no search token keys), no record is answered for them and
	// they are left out of search answers to peers. nil: none is.
	Private func(path string) bool
	// Catalog, when set, is kept in step with the store's changes (a
	// node's GET /api/library); nil keeps none.
	Catalog *catalog.Catalog
	// LibraryVisible says which peers may see the household's list of
	// films and shows (the library protocol, answered from Catalog): a
	// peer it refuses is answered the protocol's refusal. nil: none.
	// Without a Catalog the protocol is not answered at all.
	LibraryVisible func(peer.ID) bool
	// LearnFromPeers runs the learner: the households that provide a
	// local file's canonical CID are asked for their records of it in
	// the background, so that what they know shows where the household
	// has nothing of its own (learn.go). LearnInterval and
	// LearnIdleInterval are its pace while Busy reports true and
	// otherwise (zero: DefaultLearnInterval, DefaultLearnIdleInterval;
	// Busy nil: always idle).
	LearnFromPeers                   bool
	LearnInterval, LearnIdleInterval time.Duration
	Busy                             func() bool
	// Consumers are more consumers of the store's changes (a node's
	// stills, node/stills), handed each batch after the catalog.
	Consumers []store.Consumer
	// Logger; default discards.
	Logger *slog.Logger
}

// Household is what a node runs towards its peers: the DHT (a server,
// under the /metamesh prefix, unless the node's host decides), the
// announcer and its sweeping provider, the record and search protocols,
// the search indexer (and the catalog, when given), the federated
// resolver and the reprovide on a first peer. StartHousehold is the one
// place they are wired: a Node runs a Household on its own host (plus
// ingest and the API), and simulations of many households in one process
// (testnet/sim) run it on mocknet hosts.
type Household struct {
	p      *p2p.Net
	ownDHT bool // the DHT is the Household's to close (StartHousehold made it)
	st     *store.Store
	rs     *recordService
	ss     *searchService
	ls     *libraryService // nil without a catalog
	res    *resolver
	ann    *announce.Announcer
	ho     *handoff.Service
	text   *search.TextIndex
	// changes hands the store's changes to the index, the catalog and
	// the announcer.
	changes *store.Changes
	// scores are the peers that hung or lied, shared by lookups and
	// searches: asked last, a liar's records not believed.
	scores *scores
	// learn is the learner (nil unless LearnFromPeers).
	learn *learner

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Defaults of HouseholdConfig's durations (node.Config's too).
const (
	DefaultReprovideInterval = 22 * time.Hour
	DefaultLookupTimeout     = 10 * time.Second
	DefaultPeerRecordTTL     = time.Hour
)

// StartHousehold starts the federation side: on cfg.Net (a node's host and
// DHT, which it does not close), or, when that is nil, on cfg.Host with a
// DHT server of its own (a simulated household's), which Close closes.
// It announces what the store announces (store.Announced) from the start.
// It is the one place the federation side is wired.
func StartHousehold(ctx context.Context, cfg HouseholdConfig) (*Household, error) {
	if (cfg.Net == nil && cfg.Host == nil) || cfg.Key == nil || cfg.Store == nil || (cfg.ProviderDir == "" && cfg.ProviderStore == nil) {
		return nil, errors.New("household: Net or Host, Key, Store and ProviderDir (or ProviderStore) are required")
	}
	if err := protocol.CheckName(cfg.Name); err != nil {
		return nil, fmt.Errorf("household: name: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.ReprovideInterval, DefaultReprovideInterval}, {&cfg.LookupTimeout, DefaultLookupTimeout}, {&cfg.PeerRecordTTL, DefaultPeerRecordTTL}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	p, own := cfg.Net, false
	if p == nil {
		held := handoff.NewHeld(p2p.ProviderValidity(cfg.ProviderRecordTTL))
		d, err := dht.New(handoff.Observe(cfg.Host, held), p2p.DHTOptions(p2p.Config{ProviderRecordTTL: cfg.ProviderRecordTTL}, dht.ModeServer, cfg.Bootstrap)...)
		if err != nil {
			return nil, fmt.Errorf("household: start DHT: %w", err)
		}
		p, own = p2p.Wrap(cfg.Host, d, held, log.With("component", "p2p")), true
	}
	text, err := search.OpenTextIndex(cfg.SearchDir)
	if err != nil {
		if own {
			p.DHT().Close()
		}
		return nil, fmt.Errorf("household: %w", err)
	}
	sw, err := announce.NewSweeper(p.DHT(), p.Held(), cfg.ProviderDir, cfg.ProviderStore, cfg.ReprovideInterval, log)
	if err != nil {
		text.Close()
		if own {
			p.DHT().Close()
		}
		return nil, err
	}
	hh := &Household{p: p, ownDHT: own, st: cfg.Store, text: text, scores: newScores()}
	hh.rs = newRecordService(p.Host(), cfg.Store, cfg.Key, cfg.Name, log)
	hh.ss = newSearchService(p.Host(), p.DHT(), cfg.Store, text, cfg.Key, cfg.Name, log)
	hh.rs.private, hh.ss.private = cfg.Private, cfg.Private
	hh.ss.scores = hh.scores
	hh.ss.names = hh.rs.names // one set of peers' names, whichever answer told it
	if cfg.Catalog != nil {
		hh.ls = newLibraryService(p.Host(), cfg.Catalog, cfg.Key, cfg.Name, cfg.LibraryVisible, log)
		hh.ls.names, hh.ls.private = hh.rs.names, cfg.Private
	}
	hh.res = newResolver(cfg.Store, p, hh.rs, cfg.LookupTimeout, log)
	hh.res.scores = hh.scores
	hh.res.refreshAfter = cfg.PeerRecordTTL
	hh.res.names = hh.rs.names
	hh.ann = announce.New(sw, !cfg.NoSearchIndex, cfg.Private, log)
	// One follower of the store hands what changed to the search index
	// and the catalog, then to the announcer; peers ask on
	// /metamesh/search/1.2.0 (or 1.1.0, 1.0.0).
	var changes *store.Changes
	consumers := []store.Consumer{search.NewIndexer(text, func() { changes.Sweep() }, log).Consumer()}
	if cfg.Catalog != nil {
		consumers = append(consumers, cfg.Catalog.Consumer())
	}
	consumers = append(consumers, cfg.Consumers...)
	changes = cfg.Store.Changes(append(consumers, hh.ann.Consumer())...)
	hh.changes = changes
	hh.ho = handoff.Start(p.Host(), p.DHT(), p.Held(), handoff.Options{Logger: log})
	bg, cancel := context.WithCancel(context.Background())
	hh.cancel = cancel
	runs := []func(context.Context){hh.ann.Run, changes.Run, hh.reprovideOnFirstPeer}
	if cfg.LearnFromPeers {
		hh.learn = &learner{st: cfg.Store, net: hh.res.net, scores: hh.scores, log: log.With("component", "learn"),
			interval: cmp.Or(cfg.LearnInterval, DefaultLearnInterval), idle: cmp.Or(cfg.LearnIdleInterval, DefaultLearnIdleInterval),
			busy: cfg.Busy, private: cfg.Private, timeout: cfg.LookupTimeout,
			next: map[store.RootID]time.Time{}, missed: map[store.RootID]int{}, retried: map[store.RootID]bool{}, seen: map[peer.ID]bool{}}
		runs = append(runs, hh.learn.run)
	}
	for _, run := range runs {
		hh.wg.Add(1)
		go func() {
			defer hh.wg.Done()
			run(bg)
		}()
	}
	return hh, nil
}

// reprovideOnFirstPeer provides everything again whenever the routing
// table goes from empty to not empty: a household that started alone (or
// was cut off) announces its files as soon as it has peers to tell. So it
// does whenever the node gets a relay reservation afresh (not a
// renewal): the first one, whose /p2p-circuit addresses households reach
// a node behind NAT by, and every one made again after a reservation was
// lost, as when the relay restarted (a relay that is also a DHT server
// may have lost the records it held, and the connection may have flapped
// faster than a tick of this loop sees).
func (hh *Household) reprovideOnFirstPeer(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	had, fresh := false, int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		has := hh.p.DHT().RoutingTable().Size() > 0
		f := hh.p.FreshReservations()
		if has && (!had || f != fresh) {
			hh.ann.Reprovide(ctx)
		}
		had, fresh = has, f
	}
}

// LearnStats are the learner's counts since the start: the local files
// it asked peers about, those some household answered for, and the
// record requests it sent.
type LearnStats struct{ Asked, Answered, Requests int64 }

// LearnStats are the learner's counts (zero without one).
func (hh *Household) LearnStats() LearnStats {
	if hh.learn == nil {
		return LearnStats{}
	}
	return LearnStats{Asked: hh.learn.asked.Load(), Answered: hh.learn.answered.Load(), Requests: hh.learn.requests.Load()}
}

// Disproved marks peers that signed a record its bytes disproved (it
// paired a CID with another file's bytes): their records are not believed
// for about a day, and lookups and searches ask them last.
func (hh *Household) Disproved(peers ...peer.ID) {
	for _, p := range peers {
		hh.scores.add(p, weightLie)
	}
}

// Recheck has the announcer (with the search index and the catalog)
// take every root of the store again: what HouseholdConfig.Private says
// of some files changed (a marker file added or removed), so those that
// became private stop being provided and those that became public are
// provided. Asked several times before it runs, it runs once.
func (hh *Household) Recheck() { hh.changes.Sweep() }

// DHT is the household's DHT.
func (hh *Household) DHT() *dht.IpfsDHT { return hh.p.DHT() }

// Lookup answers for c as GET /api/meta/<c> does for a client on loopback:
// the store, else the federation. c is in canonical form.
func (hh *Household) Lookup(ctx context.Context, c string) (model.Document, error) {
	return hh.res.Meta(ctx, c, false, nil)
}

// Search answers q as GET /api/search?federated=1 does (first page).
func (hh *Household) Search(ctx context.Context, q string, limit int) (model.SearchResult, error) {
	return hh.ss.search(ctx, q, limit, "", true, nil)
}

// Meta answers GET /api/meta/<c> for a caller: the store, else (unless
// local) the federation. c is in canonical form. allow is asked before a
// lookup that must ask peers starts (nil: always allowed); its error is
// returned as it is.
func (hh *Household) Meta(ctx context.Context, c string, local bool, allow func() error) (model.Document, error) {
	return hh.res.Meta(ctx, c, local, allow)
}

// PeerNames returns the household names of those of ids (peer IDs) whose
// last answer carried one, by ID; nil when none has.
func (hh *Household) PeerNames(ids ...string) map[string]string {
	return hh.rs.names.of(ids...)
}

// Providers lists the peers the DHT returns for c.
func (hh *Household) Providers(ctx context.Context, c string) ([]string, error) {
	return hh.res.Providers(ctx, c)
}

// KnownProviders are the peers the store knows to hold c (from their
// records), none when it knows none or cannot say.
func (hh *Household) KnownProviders(ctx context.Context, c string) []string {
	doc, _, _ := hh.res.fromStore(ctx, c)
	return doc.Providers
}

// SearchPage answers GET /api/search: the local page, and on the first
// page of a federated search the other households' hits. allow is asked
// before a federated search asks peers (nil: always allowed); its error
// is returned as it is.
func (hh *Household) SearchPage(ctx context.Context, q string, limit int, cursor string, federated bool, allow func() error) (model.SearchResult, error) {
	return hh.ss.search(ctx, q, limit, cursor, federated, allow)
}

// Households are the connected peers that speak the library protocol,
// each with what its answer to a one-entry page said: its name, whether
// it shows its list to this household, and its counts (GET
// /api/households). None without a catalog.
func (hh *Household) Households(ctx context.Context) []model.Household {
	if hh.ls == nil {
		return []model.Household{}
	}
	return hh.ls.households(ctx)
}

// HouseholdLibrary asks household p for one page of its list (GET
// /api/households/<p>/library) and returns its verified answer. Errors
// wrap model.ErrBadRequest, model.ErrNotFound (no such household known),
// model.ErrRefused, model.ErrPeerTimeout or model.ErrPeerFailed.
func (hh *Household) HouseholdLibrary(ctx context.Context, p peer.ID, q model.HouseholdQuery) (model.HouseholdLibrary, error) {
	if hh.ls == nil {
		return model.HouseholdLibrary{}, fmt.Errorf("%w: this node lists no libraries", model.ErrNotFound)
	}
	req := libraryRequest(q)
	a, err := hh.ls.ask(ctx, p, req)
	if err != nil {
		return model.HouseholdLibrary{}, err
	}
	return householdLibrary(p, req, a), nil
}

// permit asks allow whether a request may make the node ask its peers
// now: nil always allows, allow's error refuses as it is.
func permit(allow func() error) error {
	if allow == nil {
		return nil
	}
	return allow()
}

// ProvideStats are the sweeping provider's statistics, and the handoff's.
func (hh *Household) ProvideStats() announce.Stats {
	st := hh.ann.Stats()
	ho := hh.ho.Stats()
	st.Held = hh.p.Held().Len()
	st.HandedOver, st.HandoffMessages, st.TakenOver = ho.HandedOver.Load(), ho.Messages.Load(), ho.TakenOver.Load()
	return st
}

// Close stops everything StartHousehold started, and the DHT when it made
// it; the host and the store stay open.
func (hh *Household) Close() error {
	hh.cancel()
	hh.wg.Wait()
	hh.rs.close()
	hh.ss.close()
	if hh.ls != nil {
		hh.ls.close()
	}
	hh.ho.Close()
	errs := []error{hh.ann.Close(), hh.text.Close()}
	if hh.ownDHT {
		errs = append(errs, hh.p.DHT().Close())
	}
	return errors.Join(errs...)
}
