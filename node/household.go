package node

import (
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

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store"
)

// HouseholdConfig configures a Household: the federation side of a node
// on a host and a store its caller made.
type HouseholdConfig struct {
	// Host is the libp2p host (any: a real one, or go-libp2p's mocknet);
	// the Household does not close it. Key is its identity key, which
	// signs records and search answers.
	Host host.Host
	Key  crypto.PrivKey
	// Store is the household's store; the Household does not close it.
	Store *store.Store
	// ProviderDir holds the sweeping provider's keystore and schedule (a
	// pebble database), unless ProviderStore is set: then they are kept
	// there (a simulation keeps them in memory).
	ProviderDir   string
	ProviderStore datastore.Batching
	// ReprovideInterval, ProviderRecordTTL, LookupTimeout and
	// PeerRecordTTL are as in Config; zero takes Config's defaults.
	ReprovideInterval time.Duration
	ProviderRecordTTL time.Duration
	LookupTimeout     time.Duration
	PeerRecordTTL     time.Duration
	// Bootstrap peers seed the DHT's routing table.
	Bootstrap []peer.AddrInfo
	// NoSearchIndex: provide no search token keys (Config.NoSearchIndex).
	NoSearchIndex bool
	// Catalog, when set, is kept in step by the search indexer (a node's
	// GET /api/library); nil keeps none.
	Catalog *catalog.Catalog
	// Logger; default discards.
	Logger *slog.Logger
}

// Household is what a node runs towards its peers: the DHT (a server,
// under the /metamesh prefix, unless the node's host decides), the
// announcer and its sweeping provider, the record and search protocols,
// the search indexer (and the catalog, when given), the federated
// resolver and the reprovide on a first peer. startHousehold is the one
// place they are wired: a Node runs a Household on its own host (plus
// ingest and the API), and simulations of many households in one process
// (testnet/sim) run StartHousehold on mocknet hosts.
type Household struct {
	p      *p2p.Net
	ownDHT bool // the DHT is the Household's to close (StartHousehold made it)
	st     *store.Store
	rs     *recordService
	ss     *searchService
	res    *resolver
	ann    *announce.Announcer

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartHousehold starts the federation side on cfg.Host and cfg.Store,
// with a DHT server of its own. It announces what the store announces
// (store.Announced) from the start.
func StartHousehold(ctx context.Context, cfg HouseholdConfig) (*Household, error) {
	if cfg.Host == nil || cfg.Key == nil || cfg.Store == nil || (cfg.ProviderDir == "" && cfg.ProviderStore == nil) {
		return nil, errors.New("household: Host, Key, Store and ProviderDir (or ProviderStore) are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := Config{ReprovideInterval: cfg.ReprovideInterval, ProviderRecordTTL: cfg.ProviderRecordTTL, LookupTimeout: cfg.LookupTimeout,
		PeerRecordTTL: cfg.PeerRecordTTL}
	c.SetDefaults()
	cfg.ReprovideInterval, cfg.ProviderRecordTTL, cfg.LookupTimeout, cfg.PeerRecordTTL = c.ReprovideInterval, c.ProviderRecordTTL, c.LookupTimeout, c.PeerRecordTTL
	d, err := dht.New(cfg.Host, p2p.DHTOptions(c.p2p(), dht.ModeServer, cfg.Bootstrap)...)
	if err != nil {
		return nil, fmt.Errorf("household: start DHT: %w", err)
	}
	hh, err := startHousehold(p2p.Wrap(cfg.Host, d, cfg.Logger.With("component", "p2p")), cfg)
	if err != nil {
		d.Close()
		return nil, err
	}
	hh.ownDHT = true
	return hh, nil
}

// startHousehold wires the federation side on p's host and DHT; cfg's
// durations are set (defaults applied) and its Logger too.
func startHousehold(p *p2p.Net, cfg HouseholdConfig) (*Household, error) {
	log := cfg.Logger
	sw, err := announce.NewSweeper(p.DHT(), cfg.ProviderDir, cfg.ProviderStore, cfg.ReprovideInterval, log)
	if err != nil {
		return nil, err
	}
	hh := &Household{p: p, st: cfg.Store}
	hh.rs = newRecordService(p.Host(), cfg.Store, cfg.Key, log)
	hh.ss = newSearchService(p.Host(), p.DHT(), cfg.Store, cfg.Key, log)
	hh.res = newResolver(cfg.Store, p, hh.rs, cfg.LookupTimeout, log)
	hh.res.refreshAfter = cfg.PeerRecordTTL
	hh.ann = announce.New(cfg.Store, sw, !cfg.NoSearchIndex, log)
	bg, cancel := context.WithCancel(context.Background())
	hh.cancel = cancel
	for _, run := range []func(context.Context){
		hh.ann.Run,
		// The search index follows the feed and field writes; peers ask on
		// /metamesh/search/1.1.0 (or 1.0.0).
		catalog.NewIndexer(cfg.Store, cfg.Catalog, hh.ann, log).Run,
		hh.reprovideOnFirstPeer,
	} {
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
// does when the node gets a relay reservation after having none: the
// provider records then carry its /p2p-circuit addresses, by which
// households reach a node behind NAT.
func (hh *Household) reprovideOnFirstPeer(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	had, relayed := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		has := hh.p.DHT().RoutingTable().Size() > 0
		rel := hh.p.Relayable()
		if has && (!had || (rel && !relayed)) {
			hh.ann.Reprovide(ctx)
		}
		had, relayed = has, rel
	}
}

// DHT is the household's DHT.
func (hh *Household) DHT() *dht.IpfsDHT { return hh.p.DHT() }

// Lookup answers for c as GET /api/meta/<c> does for a client on loopback:
// the store, else the federation. c is in canonical form.
func (hh *Household) Lookup(ctx context.Context, c string) (api.Document, error) {
	return hh.res.Meta(ctx, c, false, api.Caller{})
}

// Search answers q as GET /api/search?federated=1 does (first page).
func (hh *Household) Search(ctx context.Context, q string, limit int) (api.SearchResult, error) {
	return hh.ss.search(ctx, q, limit, "", true, api.Caller{})
}

// ProvideStats are the sweeping provider's statistics.
func (hh *Household) ProvideStats() announce.Stats { return hh.ann.Stats() }

// Close stops everything startHousehold started, and the DHT when
// StartHousehold made it; the host and the store stay open.
func (hh *Household) Close() error {
	hh.cancel()
	hh.wg.Wait()
	hh.rs.close()
	hh.ss.close()
	errs := []error{hh.ann.Close()}
	if hh.ownDHT {
		errs = append(errs, hh.p.DHT().Close())
	}
	return errors.Join(errs...)
}
