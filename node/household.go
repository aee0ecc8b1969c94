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
	// ReprovideInterval, ProviderRecordTTL and LookupTimeout are as in
	// Config; zero takes Config's defaults.
	ReprovideInterval time.Duration
	ProviderRecordTTL time.Duration
	LookupTimeout     time.Duration
	// Bootstrap peers seed the DHT's routing table.
	Bootstrap []peer.AddrInfo
	// NoSearchIndex: provide no search token keys (Config.NoSearchIndex).
	NoSearchIndex bool
	// Logger; default discards.
	Logger *slog.Logger
}

// Household is what a node runs towards its peers, without ingest or the
// HTTP API: the DHT (a server, under the /metamesh prefix), the announcer
// and its sweeping provider, the record and search protocols, the search
// indexer and the federated resolver, on the caller's host and store. The node itself
// runs the same parts (Start); simulations of many households in one
// process (testnet/sim) run them on mocknet hosts.
type Household struct {
	p   *p2p
	st  *store.Store
	rs  *recordService
	ss  *searchService
	res *resolver
	ann *announce.Announcer

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartHousehold starts the federation side on cfg.Host and cfg.Store.
// It announces what the store announces (store.Announced) from the start.
func StartHousehold(ctx context.Context, cfg HouseholdConfig) (*Household, error) {
	if cfg.Host == nil || cfg.Key == nil || cfg.Store == nil || (cfg.ProviderDir == "" && cfg.ProviderStore == nil) {
		return nil, errors.New("household: Host, Key, Store and ProviderDir (or ProviderStore) are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := Config{ReprovideInterval: cfg.ReprovideInterval, ProviderRecordTTL: cfg.ProviderRecordTTL, LookupTimeout: cfg.LookupTimeout}
	c.SetDefaults()
	d, err := dht.New(cfg.Host, dhtOptions(c, dht.ModeServer, cfg.Bootstrap)...)
	if err != nil {
		return nil, fmt.Errorf("household: start DHT: %w", err)
	}
	p := &p2p{host: cfg.Host, dht: d, log: log.With("component", "p2p")}
	sw, err := announce.NewSweeper(d, cfg.ProviderDir, cfg.ProviderStore, c.ReprovideInterval, log)
	if err != nil {
		d.Close()
		return nil, err
	}
	hh := &Household{p: p, st: cfg.Store}
	hh.rs = newRecordService(cfg.Host, cfg.Store, cfg.Key, log)
	hh.ss = newSearchService(cfg.Host, d, cfg.Store, cfg.Key, log)
	hh.res = newResolver(cfg.Store, p, hh.rs, c.LookupTimeout, log)
	hh.ann = announce.New(cfg.Store, sw, !cfg.NoSearchIndex, log)
	bg, cancel := context.WithCancel(context.Background())
	hh.cancel = cancel
	hh.wg.Add(2)
	go func() {
		defer hh.wg.Done()
		hh.ann.Run(bg)
	}()
	go func() {
		defer hh.wg.Done()
		catalog.NewIndexer(cfg.Store, nil, hh.ann, log).Run(bg)
	}()
	return hh, nil
}

// DHT is the household's DHT.
func (hh *Household) DHT() *dht.IpfsDHT { return hh.p.dht }

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

// Close stops everything StartHousehold started; the host and the store
// stay open.
func (hh *Household) Close() error {
	hh.cancel()
	hh.wg.Wait()
	hh.rs.close()
	hh.ss.close()
	return errors.Join(hh.ann.Close(), hh.p.dht.Close())
}
