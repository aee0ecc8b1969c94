package federation

import (
	"context"
	"sync/atomic"
	"testing"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-msgio/pbio"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// stallingDHT is a DHT server that answers FIND_NODE (with no closer
// peers, so it is taken into routing tables) and reads every other
// request without answering, holding its stream until the test ends:
// a walk that has asked it for a key's providers cannot end before the
// asker gives up on it (kad-dht waits 10 s). stalled counts the requests
// it holds.
type stallingDHT struct {
	h       host.Host
	stalled atomic.Int64
}

func startStallingDHT(t *testing.T) *stallingDHT {
	t.Helper()
	sd := &stallingDHT{h: newHost(t, anyKey(t))}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // before the host closes
	sd.h.SetStreamHandler(libp2pproto.ID(p2p.DHTPrefix+"/kad/1.0.0"), func(s network.Stream) {
		defer s.Reset()
		r, w := pbio.NewDelimitedReader(s, network.MessageSizeMax), pbio.NewDelimitedWriter(s)
		for {
			var req dhtpb.Message
			if err := r.ReadMsg(&req); err != nil {
				return
			}
			if req.GetType() != dhtpb.Message_FIND_NODE {
				sd.stalled.Add(1)
				<-done
				return
			}
			if err := w.WriteMsg(&dhtpb.Message{Type: dhtpb.Message_FIND_NODE, Key: req.GetKey()}); err != nil {
				return
			}
		}
	})
	return sd
}

// A search's keyword lookup ends once the word's providers have come and
// no new one follows, not when the DHT's walk does: with a DHT server in
// the asker's routing table that never answers GET_PROVIDERS, the walk
// cannot end within the search's 3 s budget, yet the search ends before
// its budget with the holder the index named asked and found.
func TestFederatedSearch_WordLookupEndsOnceSettled(t *testing.T) {
	t.Parallel()
	rh, _ := rendezvous(t)
	asker := startTestHousehold(t, anyKey(t), dht.ModeClient)
	holder := startTestHousehold(t, anyKey(t), dht.ModeClient)
	for _, th := range []*testHousehold{asker, holder} {
		th.joinRendezvous(t, rh)
	}
	c := holder.addFile(t, "Quietharbour Lights")
	asker.waitIndexNames(t, holder.h.ID())
	sd := startStallingDHT(t)
	connect(t, asker.h, sd.h)
	waiting.For(t, "the stalling DHT server in the asker's routing table", func() bool { return asker.d.RoutingTable().Find(sd.h.ID()) != "" })
	before := sd.stalled.Load()

	res := asker.hh.ss.fanOut(context.Background(), protocol.SearchRequest{Q: hostileWord, Limit: 20})
	t.Logf("asked %d (%d from the index), %d answers, budget over: %v; the stalling server holds %d requests",
		res.asked, res.fromIndex, len(res.answers), res.overBudget, sd.stalled.Load()-before)
	if sd.stalled.Load() == before {
		t.Fatal("the walk never asked the stalling DHT server: the test proves nothing")
	}
	if res.overBudget {
		t.Error("the search ran to the end of its budget: it waited for the walk")
	}
	found := false
	for _, a := range res.answers {
		if a.peer == holder.h.ID() {
			for _, h := range a.hits {
				found = found || h.CID == c
			}
		}
	}
	if !found || res.fromIndex != 1 {
		t.Errorf("the holder the index names: found %v, %d households from the index; want it found, 1", found, res.fromIndex)
	}
}
