package p2p

import (
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/network"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	bconnmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"

	"github.com/metamesh/node/protocol"
)

// ConnHeadroom is how many connections the resource manager allows above
// the connection manager's high watermark, at least: a DHT walk's peers
// (20–40), a region's provide (its ~20 closest), and a federated search
// (up to 96 households) at once.
const ConnHeadroom = 256

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

// appProtocols are the node's own request/answer protocols, every version
// of each.
var appProtocols = func() []libp2pproto.ID {
	var out []libp2pproto.ID
	for _, v := range append(append(slices.Clone(protocol.RecordProtocols), protocol.SearchProtocols...), protocol.HandoffProtocolID, protocol.HandoffAskProtocolID, protocol.LibraryProtocolID) {
		out = append(out, libp2pproto.ID(v))
	}
	return out
}()

// newManagers makes the host's connection manager (cfg's watermarks) and
// resource manager. Their closes go on the start's stack until the host,
// which closes them itself, takes them over.
func (p *Net) newManagers(cfg Config) (*bconnmgr.BasicConnMgr, network.ResourceManager, error) {
	cm, err := bconnmgr.NewConnManager(cfg.ConnLow, cfg.ConnHigh, bconnmgr.WithGracePeriod(time.Minute))
	if err != nil {
		return nil, nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	p.undo.push(cm.Close)
	rm, err := newResourceManager(cfg.ConnHigh)
	if err != nil {
		return nil, nil, err
	}
	p.undo.push(rm.Close)
	if lim, ok := rm.(connmgr.GetConnLimiter); ok {
		if err := cm.CheckLimit(lim); err != nil {
			return nil, nil, fmt.Errorf("p2p: %w (lower --conn-high)", err)
		}
	}
	return cm, rm, nil
}

// newResourceManager is libp2p's default limits, scaled to the machine,
// with room for connections above the connection manager's high
// watermark connHigh and the node's protocols' own stream limits.
func newResourceManager(connHigh int) (network.ResourceManager, error) {
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
	conns := rcmgr.LimitVal(max(connHigh*2, connHigh+ConnHeadroom))
	base.System.Conns, base.System.ConnsInbound, base.System.ConnsOutbound = conns, conns, conns
	protocolStreamLimits(&base, scaled)
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(base.Build(scaled)))
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	return rm, nil
}

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
