package p2p

import (
	"errors"
	"log/slog"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/amino"
	"github.com/libp2p/go-libp2p-kad-dht/records"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	bconnmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/metamesh/node/node/handoff"
)

// DHTPrefix makes the node's DHT a MetaMesh network (/metamesh/kad/1.0.0),
// never the public IPFS one.
const DHTPrefix = "/metamesh"

// Net is the node's libp2p side: the host, the DHT and the bootstrap
// loop.
type Net struct {
	host host.Host
	dht  *dht.IpfsDHT
	// held indexes the provider records the DHT holds (node/handoff).
	held  *handoff.Held
	cm    *bconnmgr.BasicConnMgr
	log   *slog.Logger
	reach *reach
	// obs are the addresses peers report seeing the node at.
	obs *trustedObservations
	// relay is the circuit relay v2 service (--relay-service), or nil.
	relay *relayv2.Relay
	// reg holds libp2p's own metrics the node serves (the relay
	// service's).
	reg *prometheus.Registry
	// keep are the peers the node stays connected to: --bootstrap, then
	// --relay peers that are not bootstrap peers.
	keep []peer.AddrInfo
	// private is true with a swarm key (a private network).
	private bool
	// undo closes what Start built, or what Wrap was given, in reverse
	// order: at Close, or at once when a start fails.
	undo closers
}

// closers is a cleanup stack: the closes of what was built, in the order
// it was built.
type closers []func() error

func (c *closers) push(f func() error) { *c = append(*c, f) }

// mark is where the stack stands, for handOver.
func (c *closers) mark() int { return len(*c) }

// handOver replaces the closes pushed since mark with f, which now
// closes what they did (the host closes the managers it was given).
func (c *closers) handOver(mark int, f func() error) {
	*c = append((*c)[:mark], f)
}

// run closes everything in reverse order, once, and joins the errors.
func (c *closers) run() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}

// DHTOptions are the DHT's options: the /metamesh prefix, mode, the
// bootstrap peers and the provider records' validity.
func DHTOptions(cfg Config, mode dht.ModeOpt, boot []peer.AddrInfo) []dht.Option {
	provOpts := []records.Option{}
	if cfg.ProviderRecordTTL > 0 {
		provOpts = append(provOpts, records.ProvideValidity(cfg.ProviderRecordTTL), records.CleanupInterval(cfg.ProviderRecordTTL/2))
	}
	return []dht.Option{
		dht.ProtocolPrefix(DHTPrefix),
		dht.Mode(mode),
		dht.BootstrapPeers(boot...),
		dht.ProviderManagerOpts(provOpts...),
	}
}

// Wrap is a Net of a host and DHT its caller made (a simulated
// household's; the DHT made on handoff.Observe(h, held)): no
// reachability, relays or bootstrap loop. Its Close closes the DHT, then
// the host.
func Wrap(h host.Host, d *dht.IpfsDHT, held *handoff.Held, log *slog.Logger) *Net {
	p := &Net{host: h, dht: d, held: held, log: log}
	p.undo.push(h.Close)
	p.undo.push(d.Close)
	return p
}

// ProviderValidity is how long the DHT keeps a provider record: ttl, or
// kad-dht's default (48 h) when ttl is zero.
func ProviderValidity(ttl time.Duration) time.Duration {
	if ttl > 0 {
		return ttl
	}
	return amino.DefaultProvideValidity
}

// Held is the index of the provider records the DHT holds, which the
// household hands over as the federation changes (node/handoff).
func (p *Net) Held() *handoff.Held { return p.held }

// Host is the libp2p host.
func (p *Net) Host() host.Host { return p.host }

// DHT is the /metamesh DHT.
func (p *Net) DHT() *dht.IpfsDHT { return p.dht }

// Relayable reports whether the node holds a relay reservation (its
// circuit addresses are what peers reach it by); false for a wrapped Net.
func (p *Net) Relayable() bool { return p.reach != nil && p.reach.Relayable() }

// FreshReservations counts the relay reservations made that were not
// renewals: the first with each relay, and every one made again after a
// reservation was lost (the relay restarted, the connection to it
// closed, it expired). 0 for a wrapped Net.
func (p *Net) FreshReservations() int64 {
	if p.reach == nil {
		return 0
	}
	return p.reach.freshReservations()
}

// Addrs are the host's addresses with /p2p/<id>, as peers dial them.
func (p *Net) Addrs() []string {
	out := []string{}
	for _, a := range p.host.Addrs() {
		out = append(out, a.String()+"/p2p/"+p.host.ID().String())
	}
	return out
}

// Close stops the loops, then the DHT, reachability, the relay service
// and the host (the reverse of Start), and returns what failed. A second
// Close closes nothing.
func (p *Net) Close() error { return p.undo.run() }
