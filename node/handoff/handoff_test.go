package handoff_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/internal/dhttest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/handoff"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// member is a host on loopback with the node's DHT (made on Observe) and
// the handoff service.
type member struct {
	h    host.Host
	d    *dht.IpfsDHT
	held *handoff.Held
	svc  *handoff.Service
}

func start(t *testing.T) *member { return startEvery(t, 100*time.Millisecond) }

// startEvery starts a member whose service compares its routing table
// every every.
func startEvery(t *testing.T, every time.Duration) *member {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	m := &member{h: h, held: handoff.NewHeld(p2p.ProviderValidity(0))}
	m.d, err = dht.New(handoff.Observe(h, m.held), p2p.DHTOptions(p2p.Config{}, dht.ModeServer, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	m.svc = handoff.Start(h, m.d, m.held, handoff.Options{Every: every})
	t.Cleanup(func() {
		m.svc.Close()
		m.d.Close()
		h.Close()
	})
	return m
}

func connect(t *testing.T, a, b *member) {
	t.Helper()
	dhttest.Connect(t, a.h, a.d, b.h, b.d)
}

// keyCloserTo returns a key (a sha2-256 multihash) closer to near than to
// every one of far, in the DHT's XOR metric.
func keyCloserTo(t *testing.T, near peer.ID, far ...peer.ID) multihash.Multihash {
	t.Helper()
	for i := range 1 << 20 {
		sum := sha256.Sum256(fmt.Appendf(nil, "key %d", i))
		k, err := multihash.Encode(sum[:], multihash.SHA2_256)
		if err != nil {
			t.Fatal(err)
		}
		ranked := kb.SortClosestPeers(append([]peer.ID{near}, far...), kb.ConvertKey(string(k)))
		if ranked[0] == near {
			return k
		}
	}
	t.Fatal("no key found")
	return nil
}

func providers(t *testing.T, m *member, k multihash.Multihash) []peer.ID {
	t.Helper()
	ais, err := m.d.ProviderStore().GetProviders(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	var out []peer.ID
	for _, ai := range ais {
		out = append(out, ai.ID)
	}
	return out
}

// A record provided while the federation was two households reaches a
// household that joins later and is closer to its key than they are,
// without a reprovide: the storer hands it over, with the expiry the
// provide gave it. A lookup that asks only the newcomer then finds the
// provider.
func TestHandoff_NewcomerCloserToKeyGetsRecords(t *testing.T) {
	t.Parallel()
	provider, storer := start(t), start(t)
	connect(t, provider, storer)
	newcomer := start(t)
	k := keyCloserTo(t, newcomer.h.ID(), provider.h.ID(), storer.h.ID())

	// The provider's ADD_PROVIDER reaches the storer over the DHT; the
	// tee notes it.
	provided := time.Now()
	if err := provider.d.Provide(t.Context(), cidOf(k), true); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the storer to hold the record", func() bool {
		return slices.Contains(providers(t, storer, k), provider.h.ID()) && storer.held.Len() == 1
	})

	connect(t, newcomer, storer)
	waiting.For(t, "the newcomer to be handed the record", func() bool {
		return slices.Contains(providers(t, newcomer, k), provider.h.ID())
	})
	if got := newcomer.svc.Stats().TakenOver.Load(); got != 1 {
		t.Errorf("newcomer took over %d records, want 1", got)
	}
	if got := storer.svc.Stats().HandedOver.Load() + provider.svc.Stats().HandedOver.Load(); got < 1 {
		t.Errorf("handed over %d records, want at least 1", got)
	}
	// The expiry is the provide's, not the handover's.
	if exp, ok := newcomer.held.Expiry(k, provider.h.ID()); !ok || exp.After(provided.Add(p2p.ProviderValidity(0)).Add(time.Second)) || exp.Before(provided.Add(p2p.ProviderValidity(0)).Add(-time.Minute)) {
		t.Errorf("handed-over record expires at %v (%v), want about %v", exp, ok, provided.Add(p2p.ProviderValidity(0)))
	}

	// A household that knows only the newcomer finds the provider.
	asker := start(t)
	connect(t, asker, newcomer)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var found []peer.ID
	for ai := range asker.d.FindProvidersAsync(ctx, cidOf(k), 1) {
		found = append(found, ai.ID)
	}
	if !slices.Contains(found, provider.h.ID()) {
		t.Errorf("lookup through the newcomer found %v, want the provider %s", found, provider.h.ID())
	}
}

// What a hostile peer hands over is bounded: a broken stream is dropped
// with nothing stored, a record naming the receiver itself is refused.
func TestHandoff_HostileSender(t *testing.T) {
	t.Parallel()
	receiver, hostile := start(t), start(t)
	connect(t, receiver, hostile)
	k := keyCloserTo(t, receiver.h.ID(), hostile.h.ID())
	send := func(raw []byte) {
		t.Helper()
		s, err := hostile.h.NewStream(t.Context(), receiver.h.ID(), libp2pproto.ID(protocol.HandoffProtocolID))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(raw); err != nil {
			t.Fatal(err)
		}
		_ = s.CloseWrite()
		buf := make([]byte, 1)
		_, _ = s.Read(buf) // until the receiver closes or resets
		_ = s.Close()
	}
	send([]byte{0x05, '{', '"'})
	send(append([]byte{0x81, 0x80, 0x80, 0x01}, make([]byte, 64)...))
	self := fmt.Sprintf(`{"records":[{"key":%q,"providers":[{"id":%q,"ttl":60}]}]}`, k.B58String(), receiver.h.ID())
	send(frame(self))
	if got := providers(t, receiver, k); len(got) != 0 {
		t.Errorf("the receiver stored %v from a hostile sender", got)
	}
	if n := receiver.svc.Stats().TakenOver.Load(); n != 0 {
		t.Errorf("took over %d records, want none", n)
	}
	waiting.For(t, "the record naming the receiver refused", func() bool {
		return receiver.svc.Stats().Refused.Load() == 1
	})
}

func frame(body string) []byte {
	b := make([]byte, 0, len(body)+3)
	n := uint64(len(body))
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(append(b, byte(n)), body...)
}

func cidOf(k multihash.Multihash) cid.Cid { return cid.NewCidV1(cid.Raw, k) }

// A newcomer asks the peers that enter its own closest for the records
// it should hold: here the storer never looks at its own table during
// the test (it would push on its next look), so only the ask brings the
// record over.
func TestHandoff_NewcomerAsksItsNearest(t *testing.T) {
	t.Parallel()
	provider, storer := start(t), startEvery(t, time.Hour)
	connect(t, provider, storer)
	newcomer := start(t)
	k := keyCloserTo(t, newcomer.h.ID(), provider.h.ID(), storer.h.ID())
	if err := provider.d.Provide(t.Context(), cidOf(k), true); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the storer to hold the record", func() bool {
		return slices.Contains(providers(t, storer, k), provider.h.ID())
	})
	connect(t, newcomer, storer)
	waiting.For(t, "the newcomer to ask and be answered", func() bool {
		return slices.Contains(providers(t, newcomer, k), provider.h.ID())
	})
	if n := newcomer.svc.Stats().Asks.Load(); n < 1 {
		t.Errorf("newcomer asked %d peers, want at least the storer", n)
	}
	if n := storer.svc.Stats().HandedOver.Load(); n < 1 {
		t.Errorf("storer handed over %d records, want the one it holds", n)
	}
}
