package p2p

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/pnet"
	basichost "github.com/libp2p/go-libp2p/p2p/host/basic"
	yamux "github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	bconnmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/protocol/autonatv2"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	noise "github.com/libp2p/go-libp2p/p2p/security/noise"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	tcp "github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/metamesh/node/node/handoff"
)

// Start builds the host and the DHT from cfg and starts the bootstrap
// loop. Nothing reaches out on its own: no mDNS, no port mapping unless
// NATPortMap, no relays but those named (--relay, and --bootstrap peers
// that offer the relay service), no public bootstrap peers.
//
// Each step builds its part and puts the part's close on the Net's one
// cleanup stack, which Close runs. When a step fails, or ctx ends before
// the start is done (the error then wraps ctx's), what was built is
// closed at once, in reverse order.
func Start(ctx context.Context, cfg Config, key crypto.PrivKey, log *slog.Logger) (_ *Net, err error) {
	p := &Net{log: log.With("component", "p2p"), private: cfg.hasPSK(), reg: prometheus.NewRegistry()}
	defer func() {
		if err != nil {
			_ = p.Close()
		}
	}()
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	peers, err := namedPeers(cfg, p.log)
	if err != nil {
		return nil, err
	}
	p.keep, p.obs = peers.keep, newTrustedObservations(nil, peers.ids())
	if p.reach, err = newReach(peers.static, peers.boot, cfg.DHTMode == "auto", p.log); err != nil {
		return nil, err
	}
	p.undo.push(p.reach.dhtEmit.Close)
	g, err := newGate(cfg)
	if err != nil {
		return nil, err
	}
	h, err := p.startHost(ctx, cfg, key, peers.listen, g)
	if err != nil {
		return nil, err
	}
	if err := p.runOnHost(cfg, h, peers.listen, g.allow); err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	if err := p.startDHT(cfg, h, peers.boot); err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	p.startLoops(peers.ids())
	return p, nil
}

// cancelled is the error of a start whose ctx ended; nil while it goes
// on.
func cancelled(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("p2p: start: %w", err)
	}
	return nil
}

// peerAddrs are the addresses a start is given: where to listen, the
// bootstrap peers, the static relays, and the peers the node keeps
// connected (both, each once).
type peerAddrs struct {
	listen             []ma.Multiaddr
	boot, static, keep []peer.AddrInfo
}

// namedPeers reads cfg's addresses, and refuses a listen port another
// process holds (portsFree).
func namedPeers(cfg Config, log *slog.Logger) (peerAddrs, error) {
	listen, err := cfg.listenAddrs(log)
	if err != nil {
		return peerAddrs{}, err
	}
	boot, err := parseBootstrap(cfg.Bootstrap)
	if err != nil {
		return peerAddrs{}, err
	}
	static, err := parsePeerAddrs(cfg.Relays, "--relay")
	if err != nil {
		return peerAddrs{}, err
	}
	keep := slices.CompactFunc(append(slices.Clone(boot), static...), func(a, b peer.AddrInfo) bool { return a.ID == b.ID })
	if err := portsFree(listen); err != nil {
		return peerAddrs{}, err
	}
	return peerAddrs{listen: listen, boot: boot, static: static, keep: keep}, nil
}

// ids are the IDs of the peers the node keeps: the peers it named, whose
// view of its address it believes at once (observed.go).
func (a peerAddrs) ids() []peer.ID {
	ids := make([]peer.ID, 0, len(a.keep))
	for _, ai := range a.keep {
		ids = append(ids, ai.ID)
	}
	return ids
}

// startHost builds the host on listen: AutoNAT v2 (client and server,
// every answer handed to the verdict, verdict.go) with its dial-back
// host, the addresses it tells peers, the connection and resource
// managers, which the host then owns. A ctx that ended stops it before
// the host binds its ports.
func (p *Net) startHost(ctx context.Context, cfg Config, key crypto.PrivKey, listen []ma.Multiaddr, g gate) (host.Host, error) {
	an, dialer, err := newAutoNAT(g.psk, g.gaters, p.reach)
	if err != nil {
		return nil, err
	}
	p.undo.push(dialer.Close)
	var built atomic.Pointer[host.Host] // the host, once libp2p.New returns
	addrs, err := addrsFactory(cfg.Announce, &built, p.reach)
	if err != nil {
		return nil, err
	}
	mark := p.undo.mark()
	cm, rm, err := p.newManagers(cfg)
	if err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	parts := hostParts{key: key, listen: listen, gate: g, cm: cm, rm: rm, autonat: an, addrs: addrs}
	h, err := libp2p.New(p.hostOptions(cfg, parts)...)
	if err != nil {
		return nil, fmt.Errorf("p2p: start host: %w", err)
	}
	p.undo.handOver(mark, h.Close)
	built.Store(&h)
	p.host, p.cm = h, cm
	return h, nil
}

// hostParts are what the host is built of, besides cfg.
type hostParts struct {
	key     crypto.PrivKey
	listen  []ma.Multiaddr
	gate    gate
	cm      *bconnmgr.BasicConnMgr
	rm      network.ResourceManager
	autonat *autonatv2.AutoNAT
	addrs   func([]ma.Multiaddr) []ma.Multiaddr
}

// hostOptions are the host's libp2p options: transports, identity,
// listen addresses, managers, the relay transport, the trusted
// observations, ping, hole punching (unless NoHolePunching), port mapping
// (NATPortMap), the gaters, the bandwidth reporter, AutoNAT v2 and the
// addresses it tells.
func (p *Net) hostOptions(cfg Config, hp hostParts) []libp2p.Option {
	obs := p.obs
	// TCP dials from its listen port (SO_REUSEPORT), so the address peers
	// observe is one they can dial back and TCP hole punching works;
	// portsFree keeps a second node on the same port from starting.
	// QUIC dials from its listening socket (no SO_REUSEPORT).
	opts := append(transports(hp.gate.psk),
		libp2p.Identity(hp.key),
		libp2p.ListenAddrs(hp.listen...),
		libp2p.QUICReuse(quicreuse.NewConnManager),
		libp2p.ConnectionManager(hp.cm),
		libp2p.ResourceManager(hp.rm),
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
		opts = append(opts, libp2p.EnableHolePunching(holepunch.WithTracer(p.reach)))
	}
	if cfg.NATPortMap {
		opts = append(opts, libp2p.NATPortMap())
	}
	if len(hp.gate.gaters) > 0 {
		opts = append(opts, libp2p.ConnectionGater(hp.gate.gaters))
	}
	if cfg.BandwidthReporter != nil {
		opts = append(opts, libp2p.BandwidthReporter(cfg.BandwidthReporter))
	}
	an := hp.autonat
	return append(opts,
		libp2p.WithFxOption(fx.Decorate(func(*autonatv2.AutoNAT) *autonatv2.AutoNAT { return an })),
		libp2p.AddrsFactory(hp.addrs))
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

// addrsFactory is what the host tells peers of its addresses: the
// --announce ones when given, else advertised's choice of its own (built
// holds the host once libp2p.New returned).
func addrsFactory(announce []string, built *atomic.Pointer[host.Host], r *reach) (func([]ma.Multiaddr) []ma.Multiaddr, error) {
	if len(announce) > 0 {
		ann, err := multiaddrs(announce, "--announce")
		if err != nil {
			return nil, err
		}
		return func([]ma.Multiaddr) []ma.Multiaddr { return ann }, nil
	}
	return func(addrs []ma.Multiaddr) []ma.Multiaddr {
		h := built.Load()
		if h == nil {
			return addrs
		}
		_, reachable := r.Reachability()
		return advertised(addrs, (*h).Network().InterfaceListenAddresses, reachable)
	}, nil
}

// runOnHost starts what runs on the host, each close on the stack:
// reachability (its relay addresses, then its loops), the trusted
// observations, the connection log and the relay service
// (--relay-service). A listen address the host did not bind stops it.
func (p *Net) runOnHost(cfg Config, h host.Host, listen []ma.Multiaddr, allow *allowGater) error {
	r, obs, cm := p.reach, p.obs, p.cm
	r.behindNAT = func() bool { return obs.behindNAT(h.Network().InterfaceListenAddresses) }
	r.outside = func() string { return obs.outside(h.Network().InterfaceListenAddresses) }
	if err := r.attach(h, func(id peer.ID) { cm.Protect(id, "metamesh-relay") }); err != nil {
		return err
	}
	p.undo.push(r.addrsEmit.Close)
	octx, stopObs := context.WithCancel(context.Background())
	p.undo.push(func() error { stopObs(); return nil })
	if err := obs.follow(octx, h); err != nil {
		return fmt.Errorf("p2p: observed addresses: %w", err)
	}
	if err := listening(h, listen); err != nil {
		return err
	}
	logConnections(h, p.log)
	if cfg.RelayService {
		relay, err := startRelayService(h, allow, p.reg)
		if err != nil {
			return err
		}
		p.relay = relay
		p.undo.push(relay.Close)
		p.log.Info("relay service on: relaying for others (circuit relay v2)", "limits", relayLimits(relayResources()))
	}
	stop, err := r.start()
	if err != nil {
		return err
	}
	p.undo.push(stop)
	return nil
}

// listening refuses a listen address the host did not bind: libp2p drops
// one it cannot listen on when another works.
func listening(h host.Host, listen []ma.Multiaddr) error {
	bound := h.Network().ListenAddresses()
	for _, want := range listen {
		if !slices.ContainsFunc(bound, func(got ma.Multiaddr) bool { return sameListen(want, got) }) {
			return fmt.Errorf("p2p: cannot listen on %s (--listen): not an address of this machine, or in use", want)
		}
	}
	return nil
}

// logConnections logs a peer's first connection and its last one
// closing.
func logConnections(h host.Host, log *slog.Logger) {
	h.Network().Notify(&network.NotifyBundle{
		ConnectedF: func(n network.Network, c network.Conn) {
			if len(n.ConnsToPeer(c.RemotePeer())) == 1 {
				log.Info("peer connected", "peer", c.RemotePeer(), "addr", c.RemoteMultiaddr(), "direction", c.Stat().Direction)
			}
		},
		DisconnectedF: func(n network.Network, c network.Conn) {
			if n.Connectedness(c.RemotePeer()) != network.Connected {
				log.Info("peer disconnected", "peer", c.RemotePeer())
			}
		},
	})
}

// startDHT starts the /metamesh DHT on h: a server, a client (--dht-mode
// client) or, with --dht-mode auto, a server unless AutoNAT v2 finds the
// node private (reach.go), its mode then told by reach rather than the
// host's bus.
func (p *Net) startDHT(cfg Config, h host.Host, boot []peer.AddrInfo) error {
	mode := dht.ModeServer
	var dh host.Host = h
	switch cfg.DHTMode {
	case "client":
		mode = dht.ModeClient
	case "auto":
		mode = dht.ModeAutoServer
		dh = dhtHost{Host: h, bus: splitBus{Bus: h.EventBus(), own: p.reach.dhtBus}}
	}
	p.held = handoff.NewHeld(ProviderValidity(cfg.ProviderRecordTTL))
	d, err := dht.New(handoff.Observe(dh, p.held), DHTOptions(cfg, mode, boot)...)
	if err != nil {
		return fmt.Errorf("p2p: start DHT: %w", err)
	}
	p.dht = d
	p.undo.push(d.Close)
	return nil
}

// startLoops starts, when the node keeps peers, the bootstrap loop and,
// outside a private network, the move of the named peers onto QUIC
// behind a NAT (named.go); their stop, which waits for them, goes on the
// stack.
func (p *Net) startLoops(named []peer.ID) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	p.undo.push(func() error { cancel(); wg.Wait(); return nil })
	if len(p.keep) == 0 {
		return
	}
	wg.Go(func() { p.bootstrapLoop(ctx) })
	if p.private {
		return
	}
	h, r := p.host, p.reach
	wg.Go(func() {
		namedOverQUIC(ctx, h, named, func() bool {
			return slices.ContainsFunc(h.Network().ListenAddresses(), isQUIC) && r.behindNAT()
		}, p.log)
	})
}
