package p2p

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/amino"
	"github.com/libp2p/go-libp2p-kad-dht/records"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/pnet"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	basichost "github.com/libp2p/go-libp2p/p2p/host/basic"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	yamux "github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	bconnmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/protocol/autonatv2"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	noise "github.com/libp2p/go-libp2p/p2p/security/noise"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	tcp "github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/metamesh/node/node/handoff"
	"github.com/metamesh/node/protocol"
)

// DHTPrefix makes the node's DHT a MetaMesh network (/metamesh/kad/1.0.0),
// never the public IPFS one.
const DHTPrefix = "/metamesh"

// p2p is the node's libp2p side: the host, the DHT and the bootstrap
// loop.
type Net struct {
	host host.Host
	dht  *dht.IpfsDHT
	// held indexes the provider records the DHT holds (node/handoff).
	held  *handoff.Held
	cm    *bconnmgr.BasicConnMgr
	log   *slog.Logger
	boot  []peer.AddrInfo
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
	// autonatDialer is the host AutoNAT v2 dials peers back from.
	autonatDialer host.Host
	stopObs       context.CancelFunc

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ConnHeadroom is how many connections the resource manager allows above
// the connection manager's high watermark, at least: a DHT walk's peers
// (20–40), a region's provide (its ~20 closest), and a federated search
// (up to 96 households) at once.
const ConnHeadroom = 256

// dhtOptions are the DHT's options: the /metamesh prefix, mode, the
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

// startP2P builds the host and the DHT from cfg and starts the bootstrap
// loop. Nothing reaches out on its own: no mDNS, no port mapping unless
// NATPortMap, no relays but those named (--relay, and --bootstrap peers
// that offer the relay service), no public bootstrap peers.
func Start(ctx context.Context, cfg Config, key crypto.PrivKey, log *slog.Logger) (*Net, error) {
	p := &Net{log: log.With("component", "p2p"), private: cfg.hasPSK(), reg: prometheus.NewRegistry()}
	listen, err := cfg.listenAddrs(p.log)
	if err != nil {
		return nil, err
	}
	boot, err := parseBootstrap(cfg.Bootstrap)
	if err != nil {
		return nil, err
	}
	p.boot = boot
	static, err := parsePeerAddrs(cfg.Relays, "--relay")
	if err != nil {
		return nil, err
	}
	p.keep = append(slices.Clone(boot), static...)
	p.keep = slices.CompactFunc(p.keep, func(a, b peer.AddrInfo) bool { return a.ID == b.ID })
	if err := portsFree(listen); err != nil {
		return nil, err
	}
	trusted := make([]peer.ID, 0, len(p.keep))
	for _, ai := range p.keep {
		trusted = append(trusted, ai.ID)
	}
	obs := newTrustedObservations(nil, trusted)
	p.obs = obs
	r, err := newReach(static, boot, cfg.DHTMode == "auto", p.log)
	if err != nil {
		return nil, err
	}
	p.reach = r
	cm, err := bconnmgr.NewConnManager(cfg.ConnLow, cfg.ConnHigh, bconnmgr.WithGracePeriod(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	p.cm = cm
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	scaled := limits.AutoScale()
	base := scaled.ToPartialLimitConfig()
	// Connections sit well above the connection manager's high
	// watermark, so trimming, not the resource manager, keeps the count:
	// a household that keeps few connections (--conn-high 6) still opens
	// the short-lived ones a DHT walk, a provide to a region's closest
	// peers and a federated search's fan-out need at once, and answers
	// the peers whose walks pass through it. A cap of twice the
	// watermark refused those dials; the DHT then dropped the refused
	// peers from its routing tables and the federation split into
	// neighbourhoods of recent joiners (docs/federation.md).
	conns := rcmgr.LimitVal(max(cfg.ConnHigh*2, cfg.ConnHigh+ConnHeadroom))
	base.System.Conns, base.System.ConnsInbound, base.System.ConnsOutbound = conns, conns, conns
	protocolStreamLimits(&base, scaled)
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(base.Build(scaled)))
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	if lim, ok := rm.(connmgr.GetConnLimiter); ok {
		if err := cm.CheckLimit(lim); err != nil {
			rm.Close()
			return nil, fmt.Errorf("p2p: %w (lower --conn-high)", err)
		}
	}
	var psk pnet.PSK
	if cfg.SwarmKeyFile != "" {
		if psk, err = readSwarmKey(cfg.SwarmKeyFile); err != nil {
			rm.Close()
			return nil, err
		}
	}
	// TCP dials from its listen port (SO_REUSEPORT), so the address peers
	// observe is one they can dial back and TCP hole punching works;
	// portsFree above keeps a second node on the same port from starting.
	// QUIC dials from its listening socket (no SO_REUSEPORT).
	opts := append(transports(psk),
		libp2p.Identity(key),
		libp2p.ListenAddrs(listen...),
		libp2p.QUICReuse(quicreuse.NewConnManager),
		libp2p.ConnectionManager(cm),
		libp2p.ResourceManager(rm),
		// The relay transport: dial a household through its relay, and
		// accept connections through the node's own relays.
		libp2p.EnableRelay(),
		libp2p.WithFxOption(fx.Decorate(func(o basichost.ObservedAddrsManager) basichost.ObservedAddrsManager {
			if o != nil {
				obs.inner = o
			}
			return obs
		})),
		libp2p.Ping(true),
	)
	if !cfg.NoHolePunching {
		opts = append(opts, libp2p.EnableHolePunching(holepunch.WithTracer(r)))
	}
	if cfg.NATPortMap {
		opts = append(opts, libp2p.NATPortMap())
	}
	var gaters gaterChain
	var allow *allowGater // the allow-list, which the relay service keeps too
	if len(cfg.AllowPeers) > 0 {
		if allow, err = newAllowGater(cfg.AllowPeers); err != nil {
			rm.Close()
			return nil, err
		}
		gaters = append(gaters, allow)
	}
	if cfg.Gater != nil {
		gaters = append(gaters, cfg.Gater)
	}
	if len(gaters) > 0 {
		opts = append(opts, libp2p.ConnectionGater(gaters))
	}
	if cfg.BandwidthReporter != nil {
		opts = append(opts, libp2p.BandwidthReporter(cfg.BandwidthReporter))
	}
	// AutoNAT v2, client and server, with every answer the node gets
	// handed to its verdict (verdict.go).
	an, dialer, err := newAutoNAT(psk, gaters, r)
	if err != nil {
		rm.Close()
		return nil, err
	}
	p.autonatDialer = dialer
	opts = append(opts, libp2p.WithFxOption(fx.Decorate(func(*autonatv2.AutoNAT) *autonatv2.AutoNAT { return an })))
	var built atomic.Pointer[host.Host] // the host, once libp2p.New returns
	if len(cfg.Announce) > 0 {
		ann, err := multiaddrs(cfg.Announce, "--announce")
		if err != nil {
			rm.Close()
			dialer.Close()
			return nil, err
		}
		opts = append(opts, libp2p.AddrsFactory(func([]ma.Multiaddr) []ma.Multiaddr { return ann }))
	} else {
		opts = append(opts, libp2p.AddrsFactory(func(addrs []ma.Multiaddr) []ma.Multiaddr {
			h := built.Load()
			if h == nil {
				return addrs
			}
			_, reachable := r.Reachability()
			return advertised(addrs, (*h).Network().InterfaceListenAddresses, reachable)
		}))
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		rm.Close()
		dialer.Close()
		return nil, fmt.Errorf("p2p: start host: %w", err)
	}
	p.host = h
	built.Store(&h)
	r.behindNAT = func() bool { return obs.behindNAT(h.Network().InterfaceListenAddresses) }
	r.outside = func() string { return obs.outside(h.Network().InterfaceListenAddresses) }
	if err := r.attach(h, func(id peer.ID) { cm.Protect(id, "metamesh-relay") }); err != nil {
		h.Close()
		return nil, err
	}
	octx, ocancel := context.WithCancel(context.Background())
	if err := obs.follow(octx, h); err != nil {
		ocancel()
		h.Close()
		return nil, fmt.Errorf("p2p: observed addresses: %w", err)
	}
	p.stopObs = ocancel
	// Every address asked for must be bound: libp2p drops one it cannot
	// listen on when another works.
	bound := h.Network().ListenAddresses()
	for _, want := range listen {
		ok := false
		for _, got := range bound {
			ok = ok || sameListen(want, got)
		}
		if !ok {
			p.closeHost()
			return nil, fmt.Errorf("p2p: cannot listen on %s (--listen): not an address of this machine, or in use", want)
		}
	}
	h.Network().Notify(&network.NotifyBundle{
		ConnectedF: func(n network.Network, c network.Conn) {
			if len(n.ConnsToPeer(c.RemotePeer())) == 1 {
				p.log.Info("peer connected", "peer", c.RemotePeer(), "addr", c.RemoteMultiaddr(), "direction", c.Stat().Direction)
			}
		},
		DisconnectedF: func(n network.Network, c network.Conn) {
			if n.Connectedness(c.RemotePeer()) != network.Connected {
				p.log.Info("peer disconnected", "peer", c.RemotePeer())
			}
		},
	})
	if cfg.RelayService {
		if p.relay, err = startRelayService(h, allow, p.reg); err != nil {
			p.closeHost()
			return nil, err
		}
		p.log.Info("relay service on: relaying for others (circuit relay v2)", "limits", relayLimits(relayResources()))
	}
	if err := r.start(); err != nil {
		p.closeHost()
		return nil, err
	}
	mode := dht.ModeServer
	var dh host.Host = h
	switch cfg.DHTMode {
	case "client":
		mode = dht.ModeClient
	case "auto":
		// A server unless AutoNAT v2 finds the node private (reach.go).
		mode = dht.ModeAutoServer
		dh = dhtHost{Host: h, bus: splitBus{Bus: h.EventBus(), own: r.dhtBus}}
	}
	p.held = handoff.NewHeld(ProviderValidity(cfg.ProviderRecordTTL))
	d, err := dht.New(handoff.Observe(dh, p.held), DHTOptions(cfg, mode, boot)...)
	if err != nil {
		p.closeHost()
		return nil, fmt.Errorf("p2p: start DHT: %w", err)
	}
	p.dht = d
	bctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	if len(p.keep) > 0 {
		p.wg.Add(1)
		go p.bootstrapLoop(bctx)
	}
	if len(p.keep) > 0 && !p.private {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			namedOverQUIC(bctx, h, trusted, func() bool {
				return slices.ContainsFunc(h.Network().ListenAddresses(), isQUIC) && r.behindNAT()
			}, p.log)
		}()
	}
	return p, nil
}

// transports are the node's transports, security and muxer: TCP, Noise,
// Yamux, and QUIC unless psk makes it a private network (TCP only: QUIC
// cannot run one). The node's host and its AutoNAT dial-back host share
// them.
func transports(psk pnet.PSK) []libp2p.Option {
	opts := []libp2p.Option{
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
	}
	if psk == nil {
		return append(opts, libp2p.Transport(quic.NewTransport))
	}
	return append(opts, libp2p.PrivateNetwork(psk))
}

// Resource-manager limits of the record and search protocols, each on its
// own: a flood of inbound streams on them (many peers, each holding as
// many as the node lets one peer hold) is refused by the resource manager
// once a protocol holds its share, and never takes the streams the DHT,
// identify and ping need.
const (
	// protocolInboundStreams bounds the inbound streams of one of the two
	// protocols from all peers together (at most a quarter of the
	// system's inbound streams on a small machine).
	protocolInboundStreams = 256
	// protocolPeerInboundStreams bounds one peer's inbound streams of one
	// of them: above MaxInboundPerPeer, which the node enforces itself
	// (resetting, and logging, the extra streams), so the resource
	// manager is only a backstop per peer.
	protocolPeerInboundStreams = 2 * MaxInboundPerPeer
	// MaxInboundPerPeer bounds the streams of one of the node's own
	// protocols one peer may have open at once: the record and search
	// services reset any more themselves.
	MaxInboundPerPeer = 8
)

// appProtocols are the node's own request/answer protocols.
var appProtocols = []libp2pproto.ID{protocol.RecordProtocolID, protocol.SearchProtocolID, protocol.HandoffProtocolID, protocol.HandoffAskProtocolID}

// protocolStreamLimits gives each of appProtocols its own inbound stream
// limits, in base, below the system's total and above one peer's share.
func protocolStreamLimits(base *rcmgr.PartialLimitConfig, scaled rcmgr.ConcreteLimitConfig) {
	sys := scaled.ToPartialLimitConfig().System.StreamsInbound
	inbound := rcmgr.LimitVal(protocolInboundStreams)
	if sys > 0 && inbound > sys/4 {
		inbound = max(sys/4, 2*protocolPeerInboundStreams)
	}
	if base.Protocol == nil {
		base.Protocol = map[libp2pproto.ID]rcmgr.ResourceLimits{}
	}
	if base.ProtocolPeer == nil {
		base.ProtocolPeer = map[libp2pproto.ID]rcmgr.ResourceLimits{}
	}
	for _, id := range appProtocols {
		pl := base.Protocol[id]
		pl.StreamsInbound = inbound
		base.Protocol[id] = pl
		pp := base.ProtocolPeer[id]
		pp.StreamsInbound = protocolPeerInboundStreams
		base.ProtocolPeer[id] = pp
	}
}

// bootstrapLoop keeps the node connected to its bootstrap peers: whenever
// it is not connected to one, it redials with backoff (1 s doubling to a
// minute), so a partition heals by itself.
func (p *Net) bootstrapLoop(ctx context.Context) {
	defer p.wg.Done()
	next := map[peer.ID]time.Time{}
	backoff := map[peer.ID]time.Duration{}
	warned := map[peer.ID]bool{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		for _, ai := range p.keep {
			// A peer reached through a relay (a bootstrap address that is
			// a /p2p-circuit one) counts as connected too.
			if c := p.host.Network().Connectedness(ai.ID); c == network.Connected || c == network.Limited {
				backoff[ai.ID] = 0
				continue
			}
			if now.Before(next[ai.ID]) {
				continue
			}
			err := p.redial(ctx, ai)
			if err != nil {
				b := max(backoff[ai.ID]*2, time.Second)
				backoff[ai.ID] = min(b, time.Minute)
				next[ai.ID] = time.Now().Add(backoff[ai.ID])
				args := []any{"peer", ai.ID, "addrs", ai.Addrs, "retry in", backoff[ai.ID], "err", dialReason(err)}
				if p.private {
					args = append(args, "hint", "with --swarm-key, a peer with another key or none cannot connect")
				}
				if !warned[ai.ID] {
					// Once per outage: a mistyped address or ID must not
					// stay silent, nor flood the log while a peer is away.
					p.log.Warn("cannot reach bootstrap peer; retrying with backoff", args...)
					warned[ai.ID] = true
				} else {
					p.log.Debug("bootstrap peer still not reachable", args...)
				}
				continue
			}
			p.log.Info("connected to bootstrap peer", "peer", ai.ID)
			warned[ai.ID] = false
			backoff[ai.ID] = 0
			// A fresh connection fills the routing table at once.
			go func() { _ = p.dht.Bootstrap(ctx) }()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// redial dials a peer the bootstrap loop keeps, past the swarm's own
// dial backoff: after kad-dht's dial to the peer, or the loop's last, the
// swarm would answer "dial backoff" without dialling. The loop keeps its
// own backoff, and its redial is a real one, whose reason it tells; a
// dial that still meets the swarm's backoff (kad-dht failed in between)
// is made once more.
func (p *Net) redial(ctx context.Context, ai peer.AddrInfo) error {
	var err error
	for range 2 {
		if sw, ok := p.host.Network().(*swarm.Swarm); ok {
			sw.Backoff().Clear(ai.ID)
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = p.host.Connect(dctx, ai)
		cancel()
		if !errors.Is(err, swarm.ErrDialBackoff) {
			break
		}
	}
	return err
}

// Wrap is a Net of a host and DHT its caller made and closes (a simulated
// household's; the DHT made on handoff.Observe(h, held)): no
// reachability, relays or bootstrap loop.
func Wrap(h host.Host, d *dht.IpfsDHT, held *handoff.Held, log *slog.Logger) *Net {
	return &Net{host: h, dht: d, held: held, log: log}
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

func (p *Net) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	var errs []error
	if p.dht != nil {
		errs = append(errs, p.dht.Close())
	}
	return errors.Join(append(errs, p.closeHost())...)
}

// closeHost stops what runs on the host, then the host.
func (p *Net) closeHost() error {
	var errs []error
	if p.reach != nil {
		p.reach.close()
	}
	if p.stopObs != nil {
		p.stopObs()
	}
	if p.relay != nil {
		errs = append(errs, p.relay.Close())
	}
	if p.host != nil {
		errs = append(errs, p.host.Close())
	}
	if p.autonatDialer != nil {
		errs = append(errs, p.autonatDialer.Close())
	}
	return errors.Join(errs...)
}

// readSwarmKey reads a private network key in the standard
// /key/swarm/psk/1.0.0/ format.
func readSwarmKey(path string) (pnet.PSK, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--swarm-key: %w", err)
	}
	psk, err := pnet.DecodeV1PSK(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("--swarm-key %s: %w (want the /key/swarm/psk/1.0.0/ format)", path, err)
	}
	return psk, nil
}

// allowGater refuses every peer not on the allow-list.
type allowGater struct{ allow map[peer.ID]bool }

func newAllowGater(ids []string) (*allowGater, error) {
	g := &allowGater{allow: map[peer.ID]bool{}}
	for _, s := range ids {
		id, err := peer.Decode(s)
		if err != nil {
			return nil, fmt.Errorf("--allow-peer %q: %w", s, err)
		}
		g.allow[id] = true
	}
	return g, nil
}

func (g *allowGater) InterceptPeerDial(p peer.ID) bool                 { return g.allow[p] }
func (g *allowGater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return g.allow[p] }
func (g *allowGater) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g *allowGater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.allow[p]
}
func (g *allowGater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}

// gaterChain lets a connection through only when every gater does.
type gaterChain []connmgr.ConnectionGater

func (c gaterChain) InterceptPeerDial(p peer.ID) bool {
	for _, g := range c {
		if !g.InterceptPeerDial(p) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	for _, g := range c {
		if !g.InterceptAddrDial(p, a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptAccept(a network.ConnMultiaddrs) bool {
	for _, g := range c {
		if !g.InterceptAccept(a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptSecured(d network.Direction, p peer.ID, a network.ConnMultiaddrs) bool {
	for _, g := range c {
		if !g.InterceptSecured(d, p, a) {
			return false
		}
	}
	return true
}

func (c gaterChain) InterceptUpgraded(conn network.Conn) (bool, control.DisconnectReason) {
	for _, g := range c {
		if ok, r := g.InterceptUpgraded(conn); !ok {
			return false, r
		}
	}
	return true, 0
}

// parseBootstrap reads /…/p2p/<id> multiaddrs, grouping a peer's
// addresses.
func parseBootstrap(addrs []string) ([]peer.AddrInfo, error) {
	return parsePeerAddrs(addrs, "--bootstrap")
}

// parsePeerAddrs reads the /…/p2p/<id> multiaddrs of flag, grouping a
// peer's addresses.
func parsePeerAddrs(addrs []string, flag string) ([]peer.AddrInfo, error) {
	mas, err := multiaddrs(addrs, flag)
	if err != nil {
		return nil, err
	}
	infos, err := peer.AddrInfosFromP2pAddrs(mas...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want …/p2p/<peerID>)", flag, err)
	}
	return infos, nil
}

func multiaddrs(addrs []string, flag string) ([]ma.Multiaddr, error) {
	out := make([]ma.Multiaddr, 0, len(addrs))
	for _, a := range addrs {
		m, err := ma.NewMultiaddr(a)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, a, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// sameListen reports whether bound is what want asked for (a port 0 or an
// unspecified IP matches what was picked).
func sameListen(want, bound ma.Multiaddr) bool {
	if want.Equal(bound) {
		return true
	}
	wc, bc := []ma.Component(want), []ma.Component(bound)
	if len(wc) != len(bc) {
		return false
	}
	for i := range wc {
		if wc[i].Protocol().Code != bc[i].Protocol().Code {
			return false
		}
		v := wc[i].Value()
		if v != bc[i].Value() && v != "0" && v != "0.0.0.0" && v != "::" {
			return false
		}
	}
	return true
}

// isQUIC reports whether m is a QUIC address.
func isQUIC(m ma.Multiaddr) bool {
	for _, c := range m {
		if c.Protocol().Code == ma.P_QUIC_V1 || c.Protocol().Code == ma.P_QUIC {
			return true
		}
	}
	return false
}
