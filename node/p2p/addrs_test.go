package p2p

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

// A household that comes back is dialled as soon as a DHT walk names it
// as a provider, however long the dial backoff its absence left: asker
// dialled it while it was away (the failures pile up the swarm's backoff,
// pinned here at its 5-minute maximum), it comes back on its identity and
// address, and a dial is refused with the backoff until LearnProvider
// has taken its provider record in; then the dial connects.
func TestLearnProvider_LiftsTheBackoffOfAHouseholdThatCameBack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	listen, key := freeTCP(t), newKey(t)
	away := loopbackHost(t, key, listen)
	ai := peer.AddrInfo{ID: away.ID(), Addrs: away.Addrs()}
	asker := loopbackHost(t, newKey(t), "/ip4/127.0.0.1/tcp/0")
	if err := asker.Connect(ctx, ai); err != nil {
		t.Fatal(err)
	}
	if err := away.Close(); err != nil {
		t.Fatal(err)
	}
	asker.Network().ClosePeer(ai.ID)
	if err := asker.Connect(ctx, ai); err == nil {
		t.Fatal("a household that is away was dialled")
	}
	sw := asker.Network().(*swarm.Swarm)
	for range 20 { // as many failed dials as a day away brings
		for _, a := range ai.Addrs {
			sw.Backoff().AddBackoff(ai.ID, a)
		}
	}

	back := loopbackHost(t, key, listen)
	if back.ID() != ai.ID {
		t.Fatalf("came back as %s, want %s", back.ID(), ai.ID)
	}
	if err := asker.Connect(ctx, ai); !errors.Is(err, swarm.ErrDialBackoff) {
		t.Fatalf("dial before the provider record: %v; want the swarm's backoff", err)
	}
	LearnProvider(asker, ai, time.Minute)
	if err := asker.Connect(ctx, ai); err != nil {
		t.Fatalf("dial after the provider record: %v", err)
	}
	LearnProvider(asker, peer.AddrInfo{ID: asker.ID()}, time.Minute) // itself: nothing to learn
	if got := asker.Peerstore().Addrs(ai.ID); len(got) == 0 {
		t.Errorf("the provider's addresses were not kept")
	}
}

// loopbackHost is a TCP-only libp2p host on key, listening on listen.
func loopbackHost(t *testing.T, key crypto.PrivKey, listen string) host.Host {
	t.Helper()
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings(listen), libp2p.NoTransports,
		libp2p.Transport(tcp.NewTCPTransport), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
