package announce

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	pb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p-kad-dht/provider"
	"github.com/libp2p/go-libp2p-kad-dht/provider/keystore"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/metamesh/node/node/derived"
	"github.com/metamesh/node/node/handoff"
)

// Sweeper provides the node's announced CIDs through kad-dht's sweeping
// provider: keys are grouped by keyspace region and each region is
// provided with one DHT walk, so a reprovide cycle costs about as many
// walks as there are regions (a few per DHT server), not one per file.
// Its keystore and its schedule persist in a pebble datastore under the
// data directory (DataDir/provider), so a restart resumes the cycle
// instead of providing everything again. That datastore is a cache of
// the store (derived.Pebble): damaged, it is moved aside and the
// announcer fills the new one (at its start-up sweep, or at once when
// the damage is found while the node runs).
type Sweeper struct {
	sp      *provider.SweepingProvider
	d       *dht.IpfsDHT
	ks      *keystore.ResettableKeystore
	ds      datastore.Batching
	pebble  *derived.Pebble // ds, when the sweeper opened it (nil: not its to close)
	resumed bool

	walks    atomic.Int64 // GetClosestPeers walks the provider ran
	messages atomic.Int64 // DHT messages it sent

	// ledger: each key's last provide and each region's latest
	// findability check (regions.go); asker sends the checks'
	// GET_PROVIDERS, counted in checkMessages; checking runs one check at
	// a time (findable.go).
	ledger        *ledger
	asker         *pb.ProtocolMessenger
	checkMessages atomic.Int64
	checking      sync.Mutex
}

// MaxReprovideDelay bounds how late a region's reprovide may come (kad-dht:
// regions grow and shrink with churn): an hour, or a tenth of a shorter
// interval.
func MaxReprovideDelay(interval time.Duration) time.Duration {
	return max(min(time.Hour, interval/10), time.Millisecond)
}

// NewSweeper opens the provider's datastore in dir (a pebble database,
// moved aside and made anew when it does not open), or uses ds when it
// is not nil, and starts the sweeping provider on d. It provides nothing
// until the announcer gives it keys.
//
// held, when not nil, is told of every record the provider adds to the
// DHT's own provider store (its own keys), so the household hands them
// over as the federation changes (node/handoff).
func NewSweeper(d *dht.IpfsDHT, held *handoff.Held, dir string, ds datastore.Batching, interval time.Duration, log *slog.Logger) (*Sweeper, error) {
	s := &Sweeper{d: d, ds: ds, ledger: newLedger()}
	if ds == nil {
		pds, err := derived.OpenPebble(dir, "provider store", log.With("component", "announce"))
		if err != nil {
			return nil, err
		}
		ds, s.ds, s.pebble = pds, pds, pds
	}
	newKeystore := func() (*keystore.ResettableKeystore, error) {
		return keystore.NewResettableKeystore(namespace.Wrap(ds, datastore.NewKey("/keystore")),
			keystore.KeystoreOption(keystore.WithPrefixBits(16)))
	}
	var err error
	s.ks, err = newKeystore()
	if s.pebble != nil && derived.Corrupt(err) {
		// Found damaged reading it: again on the one made anew.
		s.pebble.Settle()
		s.ks, err = newKeystore()
	}
	if err != nil {
		s.closeDS()
		return nil, fmt.Errorf("provider: keystore: %w", err)
	}
	// Before the provider starts, so a resumed cycle's first provides are
	// noted; failing that, the announcer's start-up sweep fills it.
	if err := s.syncLedger(context.Background()); err != nil {
		log.Warn("provider: cannot read the keystore's keys", "err", err)
	}
	s.asker, err = pb.NewProtocolMessenger(CountingSender(d.MessageSender(), &s.checkMessages))
	if err != nil {
		s.ks.Close()
		s.closeDS()
		return nil, fmt.Errorf("provider: %w", err)
	}
	h := d.Host()
	s.sp, err = provider.New(
		provider.WithHost(h),
		provider.WithRouter(walkCounter{d, &s.walks}),
		provider.WithMessageSender(provideRecorder{CountingSender(d.MessageSender(), &s.messages), s.ledger}),
		provider.WithSelfAddrs(d.FilteredAddrs),
		provider.WithAddLocalRecord(func(ctx context.Context, k mh.Multihash) error {
			// The node's own provider store names it too, as a
			// per-CID Provide does.
			if held != nil {
				held.Provided(k, h.ID())
			}
			return d.ProviderStore().AddProvider(ctx, k, peer.AddrInfo{ID: h.ID()})
		}),
		provider.WithKeystore(s.ks),
		provider.WithDatastore(namespace.Wrap(ds, datastore.NewKey("/schedule"))),
		provider.WithReplicationFactor(20),
		provider.WithReprovideInterval(interval),
		provider.WithMaxReprovideDelay(MaxReprovideDelay(interval)),
		provider.WithLoggerName("metamesh-provider"),
	)
	if err != nil {
		s.ks.Close()
		s.closeDS()
		return nil, fmt.Errorf("provider: %w", err)
	}
	// A provider that found a persisted schedule starts "disconnected"
	// (resuming its cycle) rather than "offline".
	if st, err := s.sp.Stats(context.Background()); err == nil {
		s.resumed = st.Connectivity.Status == "disconnected"
	}
	if s.resumed {
		log.Info("provider: resuming the persisted reprovide cycle", "dir", dir)
	}
	return s, nil
}

// keys lists the keystore: every multihash the provider reprovides.
func (s *Sweeper) keys(ctx context.Context) (map[string]bool, error) {
	ks, err := s.ks.Get(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ks))
	for _, k := range ks {
		out[string(k)] = true
	}
	return out, nil
}

// reset makes want the whole keystore, provides at once the keys that were
// not in it, and schedules every region that holds keys.
func (s *Sweeper) reset(ctx context.Context, want []cid.Cid) error {
	had, err := s.keys(ctx)
	if err != nil {
		return fmt.Errorf("provider: read keystore: %w", err)
	}
	ch := make(chan cid.Cid)
	go func() {
		defer close(ch)
		for _, c := range want {
			select {
			case ch <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	// ResetCids is not left early: kad-dht's keystore worker would block
	// for good sending its reply to a caller that is gone, and Close
	// would wait for that worker. When ctx ends, the feed above ends and
	// the reset completes with what it got; the next sweep (at the next
	// start) resets it again.
	if err := s.ks.ResetCids(context.WithoutCancel(ctx), ch); err != nil {
		return fmt.Errorf("provider: reset keystore: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	all := make([]mh.Multihash, len(want))
	var fresh []mh.Multihash
	for i, c := range want {
		all[i] = c.Hash()
		if !had[string(c.Hash())] {
			fresh = append(fresh, c.Hash())
		}
	}
	s.ledger.set(all)
	if len(fresh) > 0 {
		if err := s.sp.StartProviding(true, fresh...); err != nil {
			return err
		}
	}
	return s.sp.RefreshSchedule()
}

// add provides the keys of cs the keystore lacks and keeps reproviding
// them; it removes nothing.
func (s *Sweeper) add(cs []cid.Cid) error {
	if len(cs) == 0 {
		return nil
	}
	hs := make([]mh.Multihash, len(cs))
	for i, c := range cs {
		hs[i] = c.Hash()
	}
	s.ledger.add(hs...)
	return s.sp.StartProviding(false, hs...)
}

// start provides c and keeps reproviding it.
func (s *Sweeper) start(c cid.Cid) error {
	s.ledger.add(c.Hash())
	return s.sp.StartProviding(false, c.Hash())
}

// stop stops reproviding c; its records expire by themselves.
func (s *Sweeper) stop(c cid.Cid) error {
	err := s.sp.StopProviding(c.Hash())
	s.ledger.drop(c.Hash())
	return err
}

// again provides every key at once (a new relay address to tell, say),
// region by region.
func (s *Sweeper) again(ctx context.Context) error {
	ks, err := s.ks.Get(ctx, "")
	if err != nil {
		return err
	}
	s.ledger.set(ks)
	if len(ks) == 0 {
		return nil
	}
	return s.sp.StartProviding(true, ks...)
}

func (s *Sweeper) close() error {
	err := s.sp.Close()
	if e := s.ks.Close(); err == nil {
		err = e
	}
	if e := s.closeDS(); err == nil {
		err = e
	}
	return err
}

// closeDS closes the datastore when the sweeper opened it.
func (s *Sweeper) closeDS() error {
	if s.pebble == nil {
		return nil
	}
	return s.pebble.Close()
}

// onRebuild sets f to be told when the datastore the sweeper opened was
// found damaged while the node ran and was made anew, empty.
func (s *Sweeper) onRebuild(f func()) {
	if s.pebble != nil {
		s.pebble.OnRebuild(f)
	}
}

// walkCounter counts the DHT walks the provider runs.
type walkCounter struct {
	d *dht.IpfsDHT
	n *atomic.Int64
}

// A node with an empty routing table walks nowhere (the provider's
// connectivity probe, while offline): not counted.
func (w walkCounter) GetClosestPeers(ctx context.Context, key string) ([]peer.ID, error) {
	if w.d.RoutingTable().Size() > 0 {
		w.n.Add(1)
	}
	return w.d.GetClosestPeers(ctx, key)
}

// CountingSender wraps a DHT message sender so that every message sent
// through it (request or not) adds one to n: the provider's message count,
// and a benchmark's baseline measured the same way.
func CountingSender(s pb.MessageSender, n *atomic.Int64) pb.MessageSender {
	return messageCounter{s, n}
}

// messageCounter counts the DHT messages sent through it.
type messageCounter struct {
	pb.MessageSender
	n *atomic.Int64
}

func (m messageCounter) SendRequest(ctx context.Context, p peer.ID, pmes *pb.Message) (*pb.Message, error) {
	m.n.Add(1)
	return m.MessageSender.SendRequest(ctx, p, pmes)
}

func (m messageCounter) SendMessage(ctx context.Context, p peer.ID, pmes *pb.Message) error {
	m.n.Add(1)
	return m.MessageSender.SendMessage(ctx, p, pmes)
}
