package sim

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Options tune a simulated network.
type Options struct {
	// Households at the start.
	Households int
	// MedianLatency of a link (one way); each pair of households draws
	// its own from a log-normal around it, clamped to [MedianLatency×0.4,
	// MedianLatency×2.4] (20–120 ms around 50 ms). Default 50ms.
	MedianLatency time.Duration
	// Degree is how many earlier households a new one is connected to
	// before its DHT bootstraps. Default 8.
	Degree int
	// ReprovideInterval, ProviderRecordTTL and LookupTimeout of every
	// household; zero takes the node's defaults.
	ReprovideInterval time.Duration
	ProviderRecordTTL time.Duration
	LookupTimeout     time.Duration
	// Seed makes the latencies and choices repeatable.
	Seed uint64
	// Dir holds the redis-server's files. Required.
	Dir string
	// Logger for the households; default discards.
	Logger *slog.Logger
}

// Network is a running simulation.
type Network struct {
	opts  Options
	mn    mocknet.Mocknet
	redis *store.Server
	sock  string

	mu      sync.Mutex
	rng     *mrand.Rand
	Members []*Member
	nextDB  int
	maxDB   int
	drawn   []time.Duration // every link's latency
}

// Member is one household. Rejoin gives a killed one a new Host, Store
// and HH on its identity, database and provider datastore.
type Member struct {
	Index int
	ID    peer.ID
	Host  host.Host
	Store *store.Store
	HH    *federation.Household
	Alive bool
	// CIDs are the canonical CIDs of the files it holds, Titles their
	// titles (same order).
	CIDs   []string
	Titles []string

	key       crypto.PrivKey
	db        int
	providers datastore.Batching // the sweeping provider's keystore and schedule
	opts      JoinOptions        // as it first joined
	sent      counts             // what it sent, over all its runs
	// latency is, while it is away, the latency of each link Kill cut.
	latency map[peer.ID]time.Duration
}

// DHTMessages counts the DHT messages the household has sent since it
// first joined (every run of it): each request or ADD_PROVIDER written on
// a DHT stream it opened, whatever sent it (the provider, lookups,
// searches, the routing table's refresh). Its answers to other
// households' requests are not counted.
func (m *Member) DHTMessages() int64 { return m.sent.dht.Load() }

// Streams counts the streams of other protocols than the DHT the
// household has opened since it first joined, by protocol ID.
func (m *Member) Streams() map[string]int64 {
	out := map[string]int64{}
	for p, k := range m.sent.opened() {
		out[string(p)] = k
	}
	return out
}

// JoinOptions are one household's own settings; zero values take the
// network's Options.
type JoinOptions struct {
	// Connect are the households it is connected to before its DHT
	// bootstraps; none: Degree random live ones.
	Connect []*Member
	// Degree is how many random live households it is connected to when
	// Connect is empty; 0: Options.Degree.
	Degree int
	// ReprovideInterval of this household; 0: Options.ReprovideInterval.
	ReprovideInterval time.Duration
	// NoSearchIndex: the household provides no search token keys
	// (--search-index=false).
	NoSearchIndex bool
}

// maxHouseholds bounds the households of one network (databases of its
// redis-server): the starting ones and every one added later.
const maxHouseholds = 4096

// New starts a network of opts.Households households, each connected to
// up to Degree earlier ones, and waits for their DHTs to bootstrap.
func New(ctx context.Context, opts Options) (*Network, error) {
	if opts.Dir == "" {
		return nil, errors.New("sim: Options.Dir is required")
	}
	if opts.MedianLatency == 0 {
		opts.MedianLatency = 50 * time.Millisecond
	}
	if opts.Degree == 0 {
		opts.Degree = 8
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := store.StartServer(ctx, store.ServerConfig{Dir: filepath.Join(opts.Dir, "redis"), Databases: maxHouseholds, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	n := &Network{opts: opts, mn: mocknet.New(), redis: srv, sock: srv.Addr(),
		rng: mrand.New(mrand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), maxDB: maxHouseholds}
	for range opts.Households {
		if _, err := n.Join(ctx); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// latency draws one pair's one-way latency.
func (n *Network) latency() time.Duration {
	m := float64(n.opts.MedianLatency)
	d := m * math.Exp(n.rng.NormFloat64()*0.45)
	l := time.Duration(min(max(d, m*0.4), m*2.4))
	n.drawn = append(n.drawn, l)
	return l
}

// Latencies returns the one-way latency of every link, sorted.
func (n *Network) Latencies() []time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := slices.Clone(n.drawn)
	slices.Sort(out)
	return out
}

// Join adds a household: a mocknet host linked to every household (with
// its own latency to each), connected to up to Degree random live ones,
// its own database, and the node's federation side on them.
func (n *Network) Join(ctx context.Context) (*Member, error) { return n.JoinWith(ctx, JoinOptions{}) }

// JoinWith is Join with the household's own options.
func (n *Network) JoinWith(ctx context.Context, jo JoinOptions) (*Member, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.nextDB >= n.maxDB {
		return nil, fmt.Errorf("sim: at most %d households in one network", n.maxDB)
	}
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	m := &Member{Index: len(n.Members), key: key, db: n.nextDB, opts: jo,
		providers: dssync.MutexWrap(datastore.NewMapDatastore())}
	n.nextDB++
	h, err := n.addHost(m)
	if err != nil {
		return nil, err
	}
	for _, o := range n.Members {
		if err := n.link(h.ID(), o.ID, n.latency()); err != nil {
			return nil, err
		}
	}
	if err := n.start(ctx, m, h, jo); err != nil {
		return nil, err
	}
	n.Members = append(n.Members, m)
	return m, nil
}

// Rejoin starts killed household i again on its identity, its address,
// its database and its provider datastore (a node restarted on its data
// directory: the provider resumes its persisted schedule; the DHT's
// routing table and the records it held for others start empty, as a
// node's do), linked to every household with the latencies it had.
// jo.Connect or jo.Degree say whom it is connected to; its other
// settings are the ones it first joined with. The Member is the same,
// with a new Host, Store and HH.
func (n *Network) Rejoin(ctx context.Context, i int, jo JoinOptions) (*Member, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.Members[i]
	if m.Alive {
		return nil, fmt.Errorf("sim: household %d is running", i)
	}
	// Kill cut the old host's links; each is made again to the new one,
	// with the latency it had.
	h, err := n.addHost(m)
	if err != nil {
		return nil, err
	}
	for _, o := range n.Members {
		if o == m {
			continue
		}
		l, ok := m.latency[o.ID]
		if !ok {
			l = n.latency()
		}
		if err := n.link(h.ID(), o.ID, l); err != nil {
			return nil, err
		}
	}
	jo.ReprovideInterval, jo.NoSearchIndex = m.opts.ReprovideInterval, m.opts.NoSearchIndex
	if err := n.start(ctx, m, h, jo); err != nil {
		return nil, err
	}
	return m, nil
}

// addHost adds m's mocknet host, on its key and the address of its
// database's number, with a host that counts the DHT messages it sends.
func (n *Network) addHost(m *Member) (host.Host, error) {
	addr, err := ma.NewMultiaddr(fmt.Sprintf("/ip4/100.%d.%d.%d/tcp/4681", 64+m.db/65536, m.db/256%256, m.db%256))
	if err != nil {
		return nil, err
	}
	h, err := n.mn.AddPeer(m.key, addr)
	if err != nil {
		return nil, fmt.Errorf("sim: add peer: %w", err)
	}
	return countingHost{Host: h, c: &m.sent}, nil
}

// link links two households' hosts with a one-way latency.
func (n *Network) link(a, b peer.ID, latency time.Duration) error {
	l, err := n.mn.LinkPeers(a, b)
	if err != nil {
		return fmt.Errorf("sim: link: %w", err)
	}
	l.SetOptions(mocknet.LinkOptions{Latency: latency})
	return nil
}

// start opens m's store and starts its federation side on h, connected
// to jo.Connect (or up to Degree random live households), and
// bootstraps its DHT. n.mu is held.
func (n *Network) start(ctx context.Context, m *Member, h host.Host, jo JoinOptions) error {
	st, err := store.Open(ctx, store.Options{URL: "unix://" + n.sock + "?db=" + url.QueryEscape(fmt.Sprint(m.db)), Logger: n.opts.Logger})
	if err != nil {
		h.Close()
		return err
	}
	peers := jo.Connect
	if len(peers) == 0 {
		var live []*Member
		for _, o := range n.Members {
			if o.Alive && o != m {
				live = append(live, o)
			}
		}
		n.rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		degree := cmp.Or(jo.Degree, n.opts.Degree)
		peers = live[:min(len(live), degree)]
	}
	var boot []peer.AddrInfo
	for _, o := range peers {
		boot = append(boot, peer.AddrInfo{ID: o.ID, Addrs: o.Host.Addrs()})
	}
	hh, err := federation.StartHousehold(ctx, federation.HouseholdConfig{
		Host: h, Key: m.key, Store: st, ProviderStore: m.providers,
		ReprovideInterval: cmp.Or(jo.ReprovideInterval, n.opts.ReprovideInterval), ProviderRecordTTL: n.opts.ProviderRecordTTL,
		LookupTimeout: n.opts.LookupTimeout, Bootstrap: boot, Logger: n.opts.Logger, NoSearchIndex: jo.NoSearchIndex,
	})
	if err != nil {
		st.Close()
		h.Close()
		return err
	}
	m.ID, m.Host, m.Store, m.HH, m.Alive = h.ID(), h, st, hh, true
	for _, b := range boot {
		if err := h.Connect(ctx, b); err != nil {
			return fmt.Errorf("sim: connect: %w", err)
		}
	}
	if len(boot) > 0 {
		if err := hh.DHT().Bootstrap(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Kill stops household i as a machine that goes away: its links are
// cut first (nobody can dial it any more: a mocknet host that was only
// closed still takes dials, answering from a host that has stopped),
// then its federation side goes, its host is closed (every connection
// drops, on both ends: the others close theirs to it too) and its store
// is closed. Its database, its provider datastore and its links'
// latencies are left, for Rejoin.
func (n *Network) Kill(i int) error {
	n.mu.Lock()
	m := n.Members[i]
	alive := m.Alive
	m.Alive = false
	var errs []error
	var others []host.Host
	if alive {
		m.latency = map[peer.ID]time.Duration{}
		for _, o := range n.Members {
			if o == m {
				continue
			}
			if o.Alive {
				others = append(others, o.Host)
			}
			for _, l := range n.mn.LinksBetweenPeers(m.ID, o.ID) {
				m.latency[o.ID] = l.Options().Latency
			}
			if _, ok := m.latency[o.ID]; ok {
				errs = append(errs, n.mn.UnlinkPeers(m.ID, o.ID))
			}
		}
	}
	n.mu.Unlock()
	if !alive {
		return nil
	}
	errs = append(errs, m.HH.Close(), m.Host.Close(), m.Store.Close())
	// A connection a dial opened while the links were cut is closed too,
	// as the kernel closes a dead process's sockets.
	for _, o := range others {
		errs = append(errs, o.Network().ClosePeer(m.ID))
	}
	return errors.Join(errs...)
}

// KillAll kills the households ms at once.
func (n *Network) KillAll(ms []*Member) error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.Kill(m.Index)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Live returns the households that run.
func (n *Network) Live() []*Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*Member
	for _, m := range n.Members {
		if m.Alive {
			out = append(out, m)
		}
	}
	return out
}

// Random returns a random live household other than not (nil: any).
func (n *Network) Random(not *Member) *Member {
	live := n.Live()
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		m := live[n.rng.IntN(len(live))]
		if m != not || len(live) == 1 {
			return m
		}
	}
}

// Intn draws from the network's random source.
func (n *Network) Intn(k int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rng.IntN(k)
}

// AddFiles writes count synthetic files into household m's store, titled
// by title(k) (k counts from the member's first file), and returns their
// canonical CIDs. The announcer provides them from the change feed.
func (n *Network) AddFiles(ctx context.Context, m *Member, count int, title func(k int) string) ([]string, error) {
	const batch = 500
	var out []string
	base := len(m.CIDs)
	for start := 0; start < count; start += batch {
		var items []store.IngestItem
		var cids, titles []string
		for k := start; k < min(count, start+batch); k++ {
			h, canon, err := randomHashes()
			if err != nil {
				return nil, err
			}
			t := title(base + k)
			items = append(items, store.IngestItem{
				File:   store.FileStat{Path: fmt.Sprintf("/sim/%s/%d.mkv", m.ID, base+k), Size: 1 << 30, MtimeNs: time.Now().UnixNano()},
				Hashes: h,
				Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": t, "fileType": "video", "mimeType": "video/x-matroska"}},
			})
			cids, titles = append(cids, canon), append(titles, t)
		}
		res, err := m.Store.IngestBatch(ctx, items)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			if r.Err != nil {
				return nil, r.Err
			}
		}
		out = append(out, cids...)
		m.CIDs, m.Titles = append(m.CIDs, cids...), append(m.Titles, titles...)
	}
	return out, nil
}

// randomHashes are the digests of a file of random bytes, and the CID the
// node announces for it (the IPFS CID of a file of several chunks).
func randomHashes() (store.Hashes, string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return store.Hashes{}, "", err
	}
	sum := func(kind string) []byte {
		d := sha256.Sum256(append([]byte(kind), b[:]...))
		return d[:]
	}
	mid, err := protocol.MidhashCID(sum("mid"))
	if err != nil {
		return store.Hashes{}, "", err
	}
	sha, err := protocol.SHA256CID(sum("sha"))
	if err != nil {
		return store.Hashes{}, "", err
	}
	mh, err := multihash.Encode(sum("ipfs"), multihash.SHA2_256)
	if err != nil {
		return store.Hashes{}, "", err
	}
	ipfs := cid.NewCidV1(cid.DagProtobuf, mh)
	h := store.Hashes{Midhash: mid.String(), SHA256: sha.String(), IPFS: ipfs.String()}
	return h, protocol.Canonical([]string{h.Midhash, h.SHA256, h.IPFS}), nil
}

// Close stops every household, the mocknet and the redis-server.
func (n *Network) Close() error {
	n.mu.Lock()
	all := append([]*Member{}, n.Members...)
	n.mu.Unlock()
	errs := []error{n.KillAll(all), n.mn.Close(), n.redis.Close()}
	_ = os.RemoveAll(filepath.Join(n.opts.Dir, "redis"))
	return errors.Join(errs...)
}
