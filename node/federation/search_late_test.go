package federation

import (
	"testing"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/network"

	"github.com/metamesh/node/protocol"
)

// A household the keyword index names, that has never hung, is heard
// however late it answers within the search's budget, although every
// other household was asked and the search would otherwise end; one
// marked for an earlier hang is not waited for. The order is forced: the
// holder answers only once the asker waits for it alone (its
// awaiting hook), long after its place's time (1 ms here) ran out.
func TestFederatedSearch_IndexedLateHouseholdAwaited(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		marked bool
	}{
		{"never hung: waited for", false},
		{"marked: not waited for", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rh, _ := rendezvous(t)
			asker := startTestHousehold(t, anyKey(t), dht.ModeClient)
			holder := startTestHousehold(t, anyKey(t), dht.ModeClient)
			for _, th := range []*testHousehold{asker, holder} {
				th.joinRendezvous(t, rh)
			}
			c := holder.addFile(t, "Quietharbour Lights")
			asker.waitIndexNames(t, holder.h.ID())
			release := make(chan struct{})
			for _, id := range searchProtocolIDs {
				holder.h.SetStreamHandler(id, func(s network.Stream) {
					select {
					case <-release:
						holder.hh.ss.handle(s)
					case <-t.Context().Done():
						s.Reset()
					}
				})
			}
			awaited := false
			asker.hh.ss.peerTimeout, asker.hh.ss.dialTimeout = time.Millisecond, time.Millisecond
			asker.hh.ss.awaiting = func() {
				awaited = true
				close(release)
			}
			if tt.marked {
				asker.hh.scores.add(holder.h.ID(), weightHang)
			}

			res := asker.hh.ss.fanOut(t.Context(), protocol.SearchRequest{Q: hostileWord, Limit: 20})
			found := false
			for _, a := range res.answers {
				for _, h := range a.hits {
					found = found || (a.peer == holder.h.ID() && h.CID == c)
				}
			}
			t.Logf("asked %d (%d from the index), %d answers, waited for the late one: %v",
				res.asked, res.fromIndex, len(res.answers), awaited)
			if res.fromIndex != 1 {
				t.Fatalf("%d households asked from the index, want the holder", res.fromIndex)
			}
			if found != !tt.marked || awaited != !tt.marked {
				t.Errorf("holder's hit found %v, waited for %v; want %v, %v", found, awaited, !tt.marked, !tt.marked)
			}
		})
	}
}
