package p2p

import (
	"testing"

	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
)

// The node's protocols get inbound stream limits of their own: at most
// protocolInboundStreams and a quarter of the system's, never below two
// peers' shares, and one peer's share above MaxInboundPerPeer.
func TestProtocolStreamLimits(t *testing.T) {
	for _, sys := range []int{64, 1024, 100000} {
		scaled := rcmgr.ConcreteLimitConfig{}
		part := scaled.ToPartialLimitConfig()
		part.System.StreamsInbound = rcmgr.LimitVal(sys)
		scaled = part.Build(rcmgr.ConcreteLimitConfig{})
		base := rcmgr.PartialLimitConfig{}
		protocolStreamLimits(&base, scaled)
		for _, id := range appProtocols {
			in, peerIn := int(base.Protocol[id].StreamsInbound), int(base.ProtocolPeer[id].StreamsInbound)
			want := min(protocolInboundStreams, max(sys/4, 2*protocolPeerInboundStreams))
			if in != want || in > protocolInboundStreams || peerIn <= MaxInboundPerPeer || peerIn > in {
				t.Errorf("system %d, %s: inbound %d (want %d), per peer %d", sys, id, in, want, peerIn)
			}
		}
	}
}
