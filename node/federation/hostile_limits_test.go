package federation

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// inboundLimit reads the resource manager's inbound stream limit of one
// protocol, and how many inbound streams it holds now.
func inboundLimit(t *testing.T, h host.Host, id libp2pproto.ID) (limit, open int) {
	t.Helper()
	err := h.Network().ResourceManager().ViewProtocol(id, func(s network.ProtocolScope) error {
		l, ok := s.(interface{ Limit() rcmgr.Limit })
		if !ok {
			t.Fatalf("protocol scope %T has no limit", s)
		}
		limit = l.Limit().GetStreamLimit(network.DirInbound)
		open = s.Stat().NumStreamsInbound
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return limit, open
}

// A flood of record streams from many peers, each within the node's
// per-peer limit, holds at most the record protocol's own share of
// streams; the search protocol has its own, and both sit above one peer's
// limit and below the system's.
func TestHostileFlood_ProtocolStreamLimits(t *testing.T) {
	t.Parallel()
	key, err := p2p.LoadIdentity(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	p, err := p2p.Start(context.Background(), p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}, ConnLow: 100, ConnHigh: 400, DHTMode: "server"}, key, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	rs := newRecordService(p.Host(), nil, key, "", log)
	t.Cleanup(rs.close)

	var system int
	_ = p.Host().Network().ResourceManager().ViewSystem(func(s network.ResourceScope) error {
		system = s.(interface{ Limit() rcmgr.Limit }).Limit().GetStreamLimit(network.DirInbound)
		return nil
	})
	limit, _ := inboundLimit(t, p.Host(), protocol.RecordProtocolID)
	searchLimit, _ := inboundLimit(t, p.Host(), protocol.SearchProtocolID)
	if limit != searchLimit || limit <= p2p.MaxInboundPerPeer || 2*limit >= system {
		t.Fatalf("inbound stream limits: record %d, search %d, system %d; want each above %d, and both below the system's",
			limit, searchLimit, system, p2p.MaxInboundPerPeer)
	}

	ai := peer.AddrInfo{ID: p.Host().ID(), Addrs: p.Host().Addrs()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sybils []host.Host
	for range limit/p2p.MaxInboundPerPeer + 4 {
		h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if err := h.Connect(ctx, ai); err != nil {
			t.Fatal(err)
		}
		sybils = append(sybils, h)
	}
	// Every sybil opens as many record streams as one peer may hold and
	// sends nothing; the node resets them all in the end (the request's
	// deadline, or the protocol's limit at once).
	var wg sync.WaitGroup
	done := make(chan struct{})
	for _, h := range sybils {
		for range p2p.MaxInboundPerPeer {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := h.NewStream(ctx, ai.ID, libp2pproto.ID(protocol.RecordProtocolID))
				if err != nil {
					return
				}
				defer s.Reset()
				_ = s.SetReadDeadline(time.Now().Add(20 * time.Second))
				_, _ = s.Read(make([]byte, 1))
			}()
		}
	}
	go func() { wg.Wait(); close(done) }()
	peak := 0
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		default:
			_, open := inboundLimit(t, p.Host(), protocol.RecordProtocolID)
			peak = max(peak, open)
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("%d sybils, %d streams; at most %d record streams held at once (limit %d)", len(sybils), len(sybils)*p2p.MaxInboundPerPeer, peak, limit)
	if peak > limit {
		t.Errorf("%d record streams held at once, limit %d", peak, limit)
	}
	if peak <= p2p.MaxInboundPerPeer {
		t.Errorf("at most %d record streams held at once: the flood never got past one peer's share", peak)
	}
	waiting.Until(t, "every record stream to be let go after the flood", func() string {
		if _, open := inboundLimit(t, p.Host(), protocol.RecordProtocolID); open > 0 {
			return fmt.Sprintf("%d record streams still held", open)
		}
		return ""
	})
}
