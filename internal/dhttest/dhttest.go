package dhttest

import (
	"testing"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
)

// Connect dials hb from ha and waits until each DHT holds the other in
// its routing table.
func Connect(tb testing.TB, ha host.Host, da *dht.IpfsDHT, hb host.Host, db *dht.IpfsDHT) {
	tb.Helper()
	if err := ha.Connect(tb.Context(), peer.AddrInfo{ID: hb.ID(), Addrs: hb.Addrs()}); err != nil {
		tb.Fatal(err)
	}
	waiting.For(tb, "each in the other's routing table", func() bool {
		return da.RoutingTable().Find(hb.ID()) != "" && db.RoutingTable().Find(ha.ID()) != ""
	})
}
