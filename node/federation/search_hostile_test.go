package federation

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/handoff"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// The word every test household's file carries, and what the searches
// ask for.
const hostileWord = "quietharbour"

// keyWhere generates identity keys until one's peer ID satisfies ok.
func keyWhere(t *testing.T, ok func(peer.ID) bool) crypto.PrivKey {
	t.Helper()
	for {
		key, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.IDFromPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if ok(id) {
			return key
		}
	}
}

// highKey is a key whose peer ID sorts in the upper half of the ones an
// Ed25519 key can have (the ID is the key itself, so the first byte of
// the key decides), so that keys sorting below it are quick to find.
func highKey(t *testing.T) crypto.PrivKey {
	t.Helper()
	return keyWhere(t, func(id peer.ID) bool { return id[len(id)-32] >= 0xc0 })
}

// anyKey is a new identity key.
func anyKey(t *testing.T) crypto.PrivKey {
	t.Helper()
	return keyWhere(t, func(peer.ID) bool { return true })
}

// newHost is a libp2p host with key on loopback, without relays.
func newHost(t *testing.T, key crypto.PrivKey) host.Host {
	t.Helper()
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// testHousehold is a Household on a host of its own on loopback, with its
// own redis-server and a DHT in the mode given.
type testHousehold struct {
	h  host.Host
	d  *dht.IpfsDHT
	st *store.Store
	hh *Household
}

func startTestHousehold(t *testing.T, key crypto.PrivKey, mode dht.ModeOpt) *testHousehold {
	t.Helper()
	h := newHost(t, key)
	held := handoff.NewHeld(p2p.ProviderValidity(0))
	d, err := dht.New(handoff.Observe(h, held), p2p.DHTOptions(p2p.Config{}, mode, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	st := storetest.New(t)
	hh, err := StartHousehold(context.Background(), HouseholdConfig{
		Net: p2p.Wrap(h, d, held, slog.New(slog.DiscardHandler)), Key: key, Store: st, ProviderDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hh.Close() })
	return &testHousehold{h: h, d: d, st: st, hh: hh}
}

// rendezvous is a bare DHT server: the one member of the test's DHT that
// holds provider records, so that households in client mode find each
// other's words through it without dialling one another. Its ID sorts
// high (highKey).
func rendezvous(t *testing.T) (host.Host, *dht.IpfsDHT) {
	t.Helper()
	h := newHost(t, highKey(t))
	d, err := dht.New(h, p2p.DHTOptions(p2p.Config{}, dht.ModeServer, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return h, d
}

// joinRendezvous connects th to the rendezvous and waits until th's
// routing table holds it.
func (th *testHousehold) joinRendezvous(t *testing.T, rh host.Host) {
	t.Helper()
	connect(t, th.h, rh)
	waiting.For(t, "the rendezvous in a household's routing table", func() bool { return th.d.RoutingTable().Find(rh.ID()) != "" })
}

func connect(t *testing.T, from, to host.Host) {
	t.Helper()
	if err := from.Connect(t.Context(), peer.AddrInfo{ID: to.ID(), Addrs: to.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// addFile ingests a file titled title and waits until the household's
// own search finds it; it returns the file's canonical CID.
func (th *testHousehold) addFile(t *testing.T, title string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(title))
	mid, err := protocol.MidhashCID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sha, err := protocol.SHA256CID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	hs := store.Hashes{Midhash: mid.String(), SHA256: sha.String(), IPFS: sha.String()}
	res, err := th.st.IngestBatch(t.Context(), []store.IngestItem{{
		File:   store.FileStat{Path: "/library/" + title + ".mkv", Size: 1 << 30, MtimeNs: 1},
		Hashes: hs,
		Meta:   store.Meta{Version: 1, Fields: map[string]string{"titles/eng": title, "fileType": "video"}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ingest %q: %v %v", title, err, res)
	}
	waiting.For(t, "a household to index "+title, func() bool {
		r, err := th.hh.ss.search(t.Context(), hostileWord, 10, "", false, nil)
		return err == nil && slices.ContainsFunc(r.Hits, func(h model.SearchHit) bool { return h.CID == hs.Canonical() })
	})
	return hs.Canonical()
}

// waitIndexNames waits until th's DHT names p among the providers of the
// key of hostileWord.
func (th *testHousehold) waitIndexNames(t *testing.T, p peer.ID) {
	t.Helper()
	waiting.For(t, "the keyword index to name a holder", func() bool {
		for ai := range th.d.FindProvidersAsync(t.Context(), protocol.SearchTokenKey(hostileWord), 20) {
			if ai.ID == p {
				return true
			}
		}
		return false
	})
}

// hanger is a hostile peer that speaks every version of the search
// protocol, reads each request and never answers, holding the stream
// open until the test ends. asked counts the requests it read, and got
// tells of each (while it has room).
type hanger struct {
	h     host.Host
	asked atomic.Int64
	got   chan struct{}
}

func startHanger(t *testing.T, key crypto.PrivKey) *hanger {
	t.Helper()
	hg := &hanger{h: newHost(t, key), got: make(chan struct{}, 8)}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) }) // before the host closes
	for _, id := range searchProtocolIDs {
		hg.h.SetStreamHandler(id, func(s network.Stream) {
			if _, err := protocol.ReadSearchRequest(s); err != nil {
				s.Reset()
				return
			}
			hg.asked.Add(1)
			select {
			case hg.got <- struct{}{}:
			default:
			}
			<-done
			s.Reset()
		})
	}
	return hg
}

// hangers starts n hangers whose peer IDs sort below every one of below,
// each connected to to.
func hangers(t *testing.T, n int, to host.Host, below ...peer.ID) []*hanger {
	t.Helper()
	var out []*hanger
	for range n {
		hg := startHanger(t, keyWhere(t, func(id peer.ID) bool {
			return !slices.ContainsFunc(below, func(b peer.ID) bool { return id >= b })
		}))
		connect(t, hg.h, to)
		out = append(out, hg)
	}
	return out
}

// hitFrom reports whether res holds the hit of canonical CID c from peer p.
func hitFrom(res model.SearchResult, c string, p peer.ID) bool {
	return slices.ContainsFunc(res.Hits, func(h model.SearchHit) bool { return h.CID == c && h.Source == p.String() })
}

// Ten hostile peers whose IDs sort below every honest household's,
// connected to the asker and hanging on every search stream, do not keep
// a federated search from finding the connected holder and the holder
// only the keyword index names, within its budget: the connected peers
// are asked in an order no peer chooses, each hanging one given up after
// its own deadline, and the index's household is asked on its own path.
func TestFederatedSearch_HangingLowIDPeers(t *testing.T) {
	t.Parallel()
	connectedKey, indexedKey := highKey(t), highKey(t)
	rh, _ := rendezvous(t)
	asker := startTestHousehold(t, anyKey(t), dht.ModeClient)
	connected := startTestHousehold(t, connectedKey, dht.ModeClient)
	indexed := startTestHousehold(t, indexedKey, dht.ModeClient)
	for _, th := range []*testHousehold{asker, connected, indexed} {
		th.joinRendezvous(t, rh)
	}
	connect(t, connected.h, asker.h)
	connectedCID := connected.addFile(t, "Quietharbour Lights")
	indexedCID := indexed.addFile(t, "Quietharbour Tides")
	asker.waitIndexNames(t, indexed.h.ID())

	hs := hangers(t, 10, asker.h, connected.h.ID(), indexed.h.ID(), rh.ID())
	// The search as the probe found it: ten low IDs connected and
	// hanging, the connected holder among the asker's peers, the indexed
	// one not (households in client mode, a DHT server between them:
	// nothing dials the asker but the test).
	peers := asker.h.Network().Peers()
	slices.Sort(peers)
	for i, hg := range hs {
		if !slices.Contains(peers[:len(hs)], hg.h.ID()) {
			t.Fatalf("hanger %d's ID does not sort among the lowest of the asker's peers %v", i, peers)
		}
	}
	if !slices.Contains(peers, connected.h.ID()) || slices.Contains(peers, indexed.h.ID()) {
		t.Fatalf("asker's peers %v: want the connected holder %s among them and the indexed one %s not", peers, connected.h.ID(), indexed.h.ID())
	}

	res, err := asker.hh.Search(t.Context(), hostileWord, 20)
	if err != nil {
		t.Fatal(err)
	}
	hangersAsked, marked := 0, 0
	for _, hg := range hs {
		if hg.asked.Load() > 0 {
			hangersAsked++
		}
		if asker.hh.scores.of(hg.h.ID()) > 0 {
			marked++
		}
	}
	t.Logf("asked %d (%d from the index), peers %v, %d hits; %d of %d hangers asked, %d marked",
		res.Asked, res.FromIndex, res.Peers, len(res.Hits), hangersAsked, len(hs), marked)
	if !hitFrom(res, connectedCID, connected.h.ID()) {
		t.Errorf("the connected holder's hit is missing: hits %v", res.Hits)
	}
	if !hitFrom(res, indexedCID, indexed.h.ID()) {
		t.Errorf("the indexed holder's hit is missing: hits %v", res.Hits)
	}
	if res.FromIndex < 1 {
		t.Errorf("%d households asked from the index, want the indexed holder", res.FromIndex)
	}
	for _, p := range []peer.ID{connected.h.ID(), indexed.h.ID()} {
		if v := asker.hh.scores.of(p); v != 0 {
			t.Errorf("holder %s, which answered, is marked %g", p, v)
		}
	}
}

// A household the keyword index names is asked on the index's path even
// when it is connected and in the connected peers' list, not yet asked:
// the order is forced by marking it (asked last of the connected) behind
// 24 hanging peers, which the connected peers' 8 places, each held a
// second by a hanging one, get through only when the 3 s budget is over.
func TestFederatedSearch_IndexAsksConnectedHouseholdNotYetAsked(t *testing.T) {
	t.Parallel()
	rh, _ := rendezvous(t)
	asker := startTestHousehold(t, anyKey(t), dht.ModeClient)
	holder := startTestHousehold(t, anyKey(t), dht.ModeClient)
	for _, th := range []*testHousehold{asker, holder} {
		th.joinRendezvous(t, rh)
	}
	connect(t, holder.h, asker.h)
	c := holder.addFile(t, "Quietharbour Lights")
	asker.waitIndexNames(t, holder.h.ID())
	const ahead = searchFanOutParallel * int(searchFanOutTimeout/searchPeerTimeout)
	hangers(t, ahead, asker.h)
	asker.hh.scores.add(holder.h.ID(), weightHang)
	if order := connectedOrder(asker.hh.scores, asker.h.Network().Peers(), asker.h.ID()); order[len(order)-1] != holder.h.ID() || len(order) < ahead+1 {
		t.Fatalf("connected order %v: want %d peers and more, the marked holder last", order, ahead+1)
	}

	res, err := asker.hh.Search(t.Context(), hostileWord, 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("asked %d (%d from the index), peers %v", res.Asked, res.FromIndex, res.Peers)
	if !hitFrom(res, c, holder.h.ID()) {
		t.Errorf("the holder's hit is missing: hits %v", res.Hits)
	}
	if res.FromIndex != 1 {
		t.Errorf("%d households asked from the index, want 1: the holder, connected but not yet asked", res.FromIndex)
	}
}

// A peer that hangs past its deadline or answers with a bad signature is
// marked, so that it is asked last next time; a peer that answers is not,
// nor one the search's own end cut off.
func TestFederatedSearch_MarksWhoHangsOrLies(t *testing.T) {
	t.Parallel()
	asker := startTestHousehold(t, anyKey(t), dht.ModeClient)
	honest := startTestHousehold(t, anyKey(t), dht.ModeClient)
	connect(t, honest.h, asker.h)
	honest.addFile(t, "Quietharbour Lights")
	hs := hangers(t, 2, asker.h)
	liar := newHost(t, anyKey(t))
	liarKey := liar.Peerstore().PrivKey(liar.ID())
	for _, id := range searchProtocolIDs {
		liar.SetStreamHandler(id, func(s network.Stream) {
			if _, err := protocol.ReadSearchRequest(s); err != nil {
				s.Reset()
				return
			}
			b, err := protocol.SealSearchAs(string(s.Protocol()), nil, liarKey)
			if err != nil {
				s.Reset()
				return
			}
			b[len(b)-1] ^= 1
			_ = protocol.WriteResponse(s, b)
			s.Close()
		})
	}
	connect(t, liar, asker.h)

	a := &asking{ss: asker.hh.ss, req: protocol.SearchRequest{Q: hostileWord, Limit: 10}, asked: map[peer.ID]bool{}}
	// A search's budget: the hanger is past its own deadline after 1 s,
	// and its request ends with the budget.
	ctx, stop := context.WithTimeout(waiting.Context(t), searchFanOutTimeout)
	defer stop()
	for _, p := range []peer.ID{honest.h.ID(), hs[0].h.ID(), liar.ID()} {
		a.ask(ctx, p, false)
	}
	// The search ends (its budget, its caller gone) the moment the
	// second hanger has the request.
	cut, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-hs[1].got:
			cancel()
		case <-t.Context().Done():
		}
	}()
	a.ask(cut, hs[1].h.ID(), false)

	// A slow household: it answers only once its own deadline has
	// passed (ask returned and gave its place away), within the budget.
	slow := newHost(t, anyKey(t))
	slowKey := slow.Peerstore().PrivKey(slow.ID())
	release := make(chan struct{})
	for _, id := range searchProtocolIDs {
		slow.SetStreamHandler(id, func(s network.Stream) {
			if _, err := protocol.ReadSearchRequest(s); err != nil {
				s.Reset()
				return
			}
			<-release
			b, err := protocol.SealSearchAs(string(s.Protocol()), nil, slowKey)
			if err != nil {
				s.Reset()
				return
			}
			_ = protocol.WriteResponse(s, b)
			s.Close()
		})
	}
	connect(t, slow, asker.h)
	a.ask(waiting.Context(t), slow.ID(), false)
	close(release)
	a.late.Wait()
	if !slices.ContainsFunc(a.res.answers, func(h peerHits) bool { return h.peer == slow.ID() }) {
		t.Errorf("the slow household's answer, past its own deadline but within the budget, was lost: answers %v", a.res.answers)
	}

	if len(a.res.answers) != 2 || a.res.answers[0].peer != honest.h.ID() || len(a.res.answers[0].hits) != 1 {
		t.Errorf("answers %v, want the honest household's one hit and the slow one's none", a.res.answers)
	}
	for _, tc := range []struct {
		name   string
		p      peer.ID
		marked bool
	}{
		{"honest", honest.h.ID(), false},
		{"hanging past its deadline", hs[0].h.ID(), true},
		{"bad signature", liar.ID(), true},
		{"cut off by the search's end", hs[1].h.ID(), false},
		{"slow, answering past its deadline", slow.ID(), false},
	} {
		if got := asker.hh.scores.of(tc.p) > 0; got != tc.marked {
			t.Errorf("%s: marked %v (score %g), want %v", tc.name, got, asker.hh.scores.of(tc.p), tc.marked)
		}
	}
}

// The connected peers a search asks are not taken, nor ordered, by peer
// ID: each search shuffles them anew, so peers whose IDs sort highest are
// asked too and none comes first every time; marked ones go last and,
// with more than searchFanOutPeers to choose from, not at all.
func TestConnectedOrder_NotByPeerID(t *testing.T) {
	var ids []peer.ID
	for i := range searchFanOutPeers + 8 {
		ids = append(ids, peer.ID(fmt.Sprintf("peer-%03d", i)))
	}
	self := peer.ID("self")
	s := newScores()
	firsts := map[peer.ID]bool{}
	highest := 0 // orders that take one of the 8 highest IDs
	for range 200 {
		order := connectedOrder(s, append(slices.Clone(ids), self), self)
		if len(order) != searchFanOutPeers || slices.Contains(order, self) {
			t.Fatalf("order %v: want %d peers, not the node itself", order, searchFanOutPeers)
		}
		if slices.IsSorted(order) {
			t.Fatalf("order %v is by peer ID", order)
		}
		firsts[order[0]] = true
		if slices.ContainsFunc(order, func(p peer.ID) bool { return p >= ids[searchFanOutPeers] }) {
			highest++
		}
	}
	if len(firsts) < 10 || highest == 0 {
		t.Errorf("200 orders began with %d different peers and %d took a peer of the 8 highest IDs: the order is by ID", len(firsts), highest)
	}

	marked := ids[:8] // the lowest IDs
	for _, p := range marked {
		s.add(p, weightHang)
	}
	for range 50 {
		if order := connectedOrder(s, ids, self); slices.ContainsFunc(order, func(p peer.ID) bool { return slices.Contains(marked, p) }) {
			t.Fatalf("order %v takes a marked peer while %d unmarked ones wait", order, searchFanOutPeers)
		}
	}
	few := append(slices.Clone(ids[:4]), ids[20:24]...)
	order := connectedOrder(s, few, self)
	for i, p := range order {
		if slices.Contains(marked, p) != (i >= 4) {
			t.Fatalf("order %v: want the 4 unmarked peers, then the 4 marked", order)
		}
	}
}

// Those waiting to be asked are handed out the least marked first, the
// first to wait among equals; a marked one that waited first goes after
// unmarked ones that came later.
func TestLeastMarkedFirst(t *testing.T) {
	s := newScores()
	s.add("worst", 2*weightHang)
	s.add("marked", weightHang)
	in := make(chan peer.ID)
	out := make(chan peer.ID)
	go leastMarkedFirst(t.Context(), s, []peer.ID{"worst", "marked", "a"}, in, out)
	if p, _ := waiting.Recv(t, out, "the first to ask"); p != "a" {
		t.Fatalf("first handed out %q, want the unmarked a", p)
	}
	for _, p := range []peer.ID{"b", "c"} {
		select {
		case in <- p:
		case <-waiting.After():
			t.Fatal("leastMarkedFirst takes no more households")
		}
	}
	close(in)
	var got []peer.ID
	for {
		p, ok := waiting.Recv(t, out, "the next to ask")
		if !ok {
			break
		}
		got = append(got, p)
	}
	if want := []peer.ID{"b", "c", "marked", "worst"}; !slices.Equal(got, want) {
		t.Errorf("handed out %v, want %v", got, want)
	}
}
